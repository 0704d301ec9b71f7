# cmake -DOUT=file.c -DNAME=symbol -DINPUTS="a;b" -P embed.cmake
# Writes const char NAME[] holding the concatenated inputs, NUL-terminated, each input
# preceded by a #line directive naming it, so that an OpenCL build log's line numbers
# are those of the file it names.
set(hex "")
foreach(f IN LISTS INPUTS)
  get_filename_component(name "${f}" NAME)
  string(HEX "#line 1 \"${name}\"\n" line)
  file(READ "${f}" h HEX)
  string(APPEND hex "${line}${h}0a")
endforeach()
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUT}.tmp" "/* generated from ${INPUTS} */\n#include <stddef.h>\nconst char ${NAME}[] = {\n  ${bytes}0x00};\nconst size_t ${NAME}_size = sizeof ${NAME} - 1;\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
