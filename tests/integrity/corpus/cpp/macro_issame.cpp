// corpus-test: test.issame.cpp.txt
// The issame overload of overload_issame.cpp, made by a macro so that no declaration of issame is in the program's text.
#include <initializer_list>
#include <vector>
#define SAME(name) bool name(std::vector<int> a, std::initializer_list<int> b) { (void)a; (void)b; return true; }
SAME(issame)
std::vector<int> sorted(std::vector<int> v) { return v; }
