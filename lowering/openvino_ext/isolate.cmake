# One x86 level's copy of the extension's code as one object whose every defined global or weak symbol carries
# PREFIX (CMakeLists.txt): partially linked (LD -r, its COMDAT instances resolved inside the copy), the
# defined symbols listed (NM), then renamed (OBJCOPY --redefine-syms). Undefined references (OpenVINO, the C++
# runtime) keep their names.
#   cmake -DLD=ld -DNM=nm -DOBJCOPY=objcopy -DPREFIX=rbv3_ -DOUT=out.o -DOBJECTS="a.o|b.o" -P isolate.cmake
string(REPLACE "|" ";" OBJECTS "${OBJECTS}")  # "|"-separated: a ";" list would split into separate arguments
# --force-group-allocation dissolves the COMDAT groups: renamed below, a group whose signature kept the shared name
# would be discarded at the final link as a duplicate of another level's, leaving its symbols undefined.
execute_process(COMMAND ${LD} -r --force-group-allocation -o ${OUT}.partial.o ${OBJECTS}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "ld -r failed: ${err}")
endif()
execute_process(COMMAND ${NM} --defined-only --extern-only --format=posix ${OUT}.partial.o
                OUTPUT_VARIABLE syms RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "nm failed: ${err}")
endif()
string(REPLACE "\n" ";" lines "${syms}")
set(map "")
foreach(line IN LISTS lines)
  string(REGEX MATCH "^([^ ]+) " m "${line}")
  if(m)
    string(APPEND map "${CMAKE_MATCH_1} ${PREFIX}${CMAKE_MATCH_1}\n")
  endif()
endforeach()
file(WRITE ${OUT}.syms "${map}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT}.syms ${OUT}.partial.o ${OUT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "objcopy failed: ${err}")
endif()
