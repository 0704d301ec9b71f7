# cmake -DTESSERA=exe -DMPIEXEC=mpiexec -DCONFIG=file -DOUT=folder -DSTEPS=n -DHALF=n
#       -DCOMMON="arg|arg" -DFIRST="ranks|arg|..." -DSECOND="ranks|arg|..."
#       -DPATTERNS="glob;glob" -DCOMPARE=compare_outputs.cmake -P restart.cmake
# Interrupted and restarted equals uninterrupted, byte for byte:
#   whole: CONFIG for STEPS steps as FIRST says (ranks, then extra arguments);
#   part 1: the same for HALF steps, with a checkpoint at HALF;
#   part 2: --restart from that checkpoint to STEPS, as SECOND says (other ranks, hs,
#           layout), into part 1's folder;
# then every file matching PATTERNS is the same in both folders. COMMON: arguments of all
# three runs (they all checkpoint every HALF steps, so that their output says the same).
function(run_tessera what spec)
  string(REPLACE "|" ";" args "${spec}")
  list(POP_FRONT args ranks)
  string(REPLACE "|" ";" common "${COMMON}")
  set(env)
  if(ranks GREATER 1)
    set(env ${CMAKE_COMMAND} -E env OMP_NUM_THREADS=1)
  endif()
  execute_process(COMMAND ${env} ${MPIEXEC} -n ${ranks} --oversubscribe ${TESSERA} run ${CONFIG}
                          ${common} --set output.checkpoint_every=${HALF} ${args} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ${ranks} rank(s) ${args} ${ARGN}")
endfunction()

file(REMOVE_RECURSE "${OUT}")
run_tessera("whole" "${FIRST}" --steps ${STEPS} --output "${OUT}/whole")
run_tessera("part 1" "${FIRST}" --steps ${HALF} --output "${OUT}/parts")
string(LENGTH "${HALF}" len)
math(EXPR pad "6 - ${len}")
string(REPEAT "0" ${pad} zeros)
run_tessera("part 2" "${SECOND}" --steps ${STEPS} --output "${OUT}/parts"
            --restart "${OUT}/parts/checkpoint_${zeros}${HALF}.tsrc")
execute_process(COMMAND ${CMAKE_COMMAND} "-DA=${OUT}/whole" "-DB=${OUT}/parts"
                        "-DPATTERNS=${PATTERNS}" -P ${COMPARE} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the restarted run's output differs from the uninterrupted run's")
endif()
