// expect: refused
// needs: nvrtc
// Hides an include from a naive comment scanner: the "/*" sits inside a raw string literal, so the
// compiler sees the include that the scanner would take for a comment.
const char* cover = R"x( " /* )x";
#include "hidden.txt"
// */
