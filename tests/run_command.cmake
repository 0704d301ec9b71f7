# Runs one command line and checks its outcome, for tests of the tessera command line.
#   -DCOMMAND=<;-list>        the command
#   -DEXPECT_EXIT=zero|nonzero
#   -DEXPECT_STDOUT=<regex>   optional; must match stdout
#   -DEXPECT_ERROR=<text>     optional; stderr must contain "tessera: error: " exactly once
#                             and this text
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 120)
string(REPLACE ";" " " shown "${COMMAND}")
set(report "command: ${shown}\nexit: ${rc}\n--- stdout\n${out}\n--- stderr\n${err}")
if(EXPECT_EXIT STREQUAL "zero" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit status 0\n${report}")
elseif(EXPECT_EXIT STREQUAL "nonzero" AND (rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$"))
  message(FATAL_ERROR "expected a non-zero exit status (not a crash or time-out)\n${report}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}'\n${report}")
endif()
if(DEFINED EXPECT_ERROR)
  string(REGEX MATCHALL "tessera: error: " hits "${err}")
  list(LENGTH hits n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected exactly one 'tessera: error:' line, got ${n}\n${report}")
  endif()
  string(FIND "${err}" "${EXPECT_ERROR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr lacks '${EXPECT_ERROR}'\n${report}")
  endif()
  foreach(bad "Segmentation" "MPI_ABORT" "Sanitizer" "runtime error")
    string(FIND "${err}" "${bad}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "stderr shows '${bad}'\n${report}")
    endif()
  endforeach()
endif()
message(STATUS "ok: ${shown}")
