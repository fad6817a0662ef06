// expect: refused
// needs: nvrtc
// Includes a file so that compiling fails and the compile error quotes it: the grader's command
// line (and with it the path of the hidden cases). Refused before compiling; even a compile log
// keeps only the submission's own lines.
#include "/proc/self/cmdline"
