# cmake -DOUT=file.c -DNAME=symbol -DINPUTS="a;b" -P embed.cmake
# Writes const char NAME[] holding the concatenated inputs, NUL-terminated.
set(hex "")
foreach(f IN LISTS INPUTS)
  file(READ "${f}" h HEX)
  string(APPEND hex "${h}")
endforeach()
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUT}.tmp" "/* generated from ${INPUTS} */\n#include <stddef.h>\nconst char ${NAME}[] = {\n  ${bytes}0x00};\nconst size_t ${NAME}_size = sizeof ${NAME} - 1;\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
