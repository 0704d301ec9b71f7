#!/usr/bin/env python3
"""The command line's documentation agrees with itself: usage:
check_help_docs.py TESSERA README

Every form of every command (run, plan, bench, bench --hetero, bench --config,
bench --machine, bench --fma, info, exchange-demo) has the same options in three places:
the synopsis of `tessera --help`, the synopsis of `tessera <form> --help` (which exits 0),
and the README's command list ("## The command line"); `tessera bench --help` shows every
form of bench with the same options too. A synopsis is a form's first line
and the lines after it that begin with "[" (the options it takes)."""
import re
import subprocess
import sys

FORMS = ["run", "plan", "bench", "bench --hetero", "bench --config", "bench --machine",
         "bench --fma", "info", "exchange-demo"]
OPTION = re.compile(r"--[a-z][a-z-]*")


def fail(msg):
    print("check_help_docs: FAILED: " + msg)
    sys.exit(1)


def form_of(line, prefix):
    """The form a synopsis line starts, or None."""
    rest = line[len(prefix):] if line.startswith(prefix) else None
    if rest is None or not rest or rest[0] == " ":
        return None
    words = rest.split()
    if len(words) > 1 and words[0] == "bench" and words[1] in ("--hetero", "--config",
                                                               "--machine", "--fma"):
        return "bench " + words[1]
    return words[0] if words[0] in FORMS else None


def synopses(lines, prefix):
    """{form: set of options} of every synopsis whose first line starts with prefix."""
    found, current = {}, None
    for line in lines:
        form = form_of(line, prefix)
        if form:
            current = form
            found.setdefault(form, set()).update(OPTION.findall(synopsis_part(line)))
        elif current and line.strip().startswith("["):
            found[current].update(OPTION.findall(synopsis_part(line)))
        else:
            current = None
    for form in found:
        found[form].discard("--help")
    return found


def synopsis_part(line):
    """The line up to its description (a gap of three or more spaces after text)."""
    text = line.strip()
    m = re.search(r"\S(\s{3,})\S", text)
    return text[:m.start(1)] if m else text


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    tessera, readme = sys.argv[1:3]
    rc, text = run([tessera, "--help"])
    if rc != 0:
        fail("tessera --help exited %d" % rc)
    main_help = synopses(text.splitlines(), "  ")
    block = open(readme).read().split("## The command line", 1)[1].split("```")[1]
    readme_forms = synopses(block.splitlines(), "tessera ")
    rc, text = run([tessera, "bench", "--help"])
    if rc != 0:
        fail("tessera bench --help exited %d" % rc)
    bench_help = synopses(text.splitlines(), "  ")
    for form in FORMS:
        rc, own = run([tessera] + form.split() + ["--help"])
        if rc != 0:
            fail("tessera %s --help exited %d: %s" % (form, rc, own))
        lines = [re.sub(r"^usage: tessera ", "tessera ", l) for l in own.splitlines()]
        own_forms = synopses(lines, "tessera ")
        own_forms.update({k: v for k, v in synopses(lines, "  ").items() if k not in own_forms})
        places = {"tessera --help": main_help.get(form), "README.md": readme_forms.get(form),
                  "tessera %s --help" % form: own_forms.get(form)}
        if form.startswith("bench"):
            places["tessera bench --help"] = bench_help.get(form)
        for where, options in places.items():
            if options is None:
                fail("%s has no synopsis of '%s'" % (where, form))
        first = places["tessera --help"]
        for where, options in places.items():
            if options != first:
                fail("'%s': tessera --help lists %s, %s lists %s (missing %s, extra %s)"
                     % (form, sorted(first), where, sorted(options),
                        sorted(first - options), sorted(options - first)))
        print("%-16s %s" % (form, " ".join(sorted(first))))
    print("check_help_docs: ok")


main()
