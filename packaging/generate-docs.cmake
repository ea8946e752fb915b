# Run at build time: rdmasweep writes its manual page and bash completion.
execute_process(COMMAND ${RDMASWEEP} help --man OUTPUT_FILE ${MAN} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rdmasweep help --man failed (${rc})")
endif()
# gzip -n: no name or time stamp, so the package is reproducible (Debian policy wants man pages gzipped).
execute_process(COMMAND gzip -9nf ${MAN} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${MAN} failed (${rc})")
endif()
execute_process(COMMAND ${RDMASWEEP} help --bash-completion OUTPUT_FILE ${COMPLETION} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rdmasweep help --bash-completion failed (${rc})")
endif()
