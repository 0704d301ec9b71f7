# cmake -DMPIEXEC=... -DTESSERA=... -DCONFIGS="a.json;b.json;..." [-DRANKS=N]
#       [-DTRANSFERS=T] -P count_launches.cmake
# Runs `tessera bench --config` of each configuration (RANKS processes, default 1, hs
# gpu: the same case in more and more blocks) and checks that a step gives the OpenCL
# device the same number of kernel launches and transfers in every one: a GPU process
# advances all its blocks with a fixed number of launches, whatever their number. With
# TRANSFERS, each configuration's step must also move exactly T transfers each way (the
# most of any process): every field of a process crosses in one read and one write.
if(NOT RANKS)
  set(RANKS 1)
endif()
set(first "")
foreach(config IN LISTS CONFIGS)
  execute_process(COMMAND ${MPIEXEC} -n ${RANKS} ${TESSERA} bench --config ${config} --steps 2
                          --repeat 1
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bench --config ${config} failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "in ([0-9]+) blocks")
    message(FATAL_ERROR "no block count in:\n${out}")
  endif()
  set(blocks ${CMAKE_MATCH_1})
  if(NOT out MATCHES "OpenCL device per step: ([0-9]+ kernel launches, [0-9]+ transfers to the host, [0-9]+ to the device)")
    message(FATAL_ERROR "no device counts in:\n${out}\n${err}")
  endif()
  set(counts "${CMAKE_MATCH_1}")
  message(STATUS "${config}, ${blocks} blocks: ${counts}")
  if(DEFINED TRANSFERS AND NOT counts MATCHES " ${TRANSFERS} transfers to the host, ${TRANSFERS} to the device")
    message(FATAL_ERROR "${config}: ${counts}; expected ${TRANSFERS} transfer(s) each way")
  endif()
  if(first STREQUAL "")
    set(first "${counts}")
  elseif(NOT counts STREQUAL first)
    message(FATAL_ERROR "${config} (${blocks} blocks): ${counts}; the first configuration: ${first}")
  endif()
endforeach()
