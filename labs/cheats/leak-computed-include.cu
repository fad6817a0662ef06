// expect: refused
// needs: nvrtc
// The same through a macro, a line splice and the %: digraph, which a check of `#include "..."`
// lines alone would miss.
#define SECRET "/proc/self/environ"
%:inc\
lude SECRET
