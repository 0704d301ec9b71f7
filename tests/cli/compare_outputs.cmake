# cmake -DA=folder -DB=folder -DPATTERNS="glob;glob" -P compare_outputs.cmake
# Every file matching the patterns under A must exist under B with the same bytes, and
# there must be at least one: two runs that must give identical output (e.g. hs cpu and
# hs gpu, which are bitwise equal) wrote identical VTK files, probes and pictures.
set(n 0)
foreach(pattern IN LISTS PATTERNS)
  file(GLOB_RECURSE files RELATIVE "${A}" "${A}/${pattern}")
  foreach(f IN LISTS files)
    if(NOT EXISTS "${B}/${f}")
      message(FATAL_ERROR "${B}/${f} is missing (it exists in ${A})")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${A}/${f}" "${B}/${f}"
                    RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${A}/${f} and ${B}/${f} differ")
    endif()
    math(EXPR n "${n} + 1")
  endforeach()
endforeach()
if(n EQUAL 0)
  message(FATAL_ERROR "no file matches ${PATTERNS} in ${A}")
endif()
message(STATUS "${n} files identical in ${A} and ${B}")
