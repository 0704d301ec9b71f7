# What the peer-bench scripts share (sourced, not run): messages, option values and the
# median of their runs.
die() { echo "peer-bench: error: $*" >&2; exit 1; }
note() { echo "peer-bench: $*"; }
need_arg() { [[ $# -ge 2 && -n "$2" ]] || die "option $1 needs a value (see --help)"; }
. "$(dirname "${BASH_SOURCE[0]}")/../bench-common.sh" # median
