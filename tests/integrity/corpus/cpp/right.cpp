#include <string>
#include <algorithm>
#include <vector>
int add(int a, int b) { return a + b; }
double half(double x) { return x / 2; }
std::string reverse(std::string s) { std::reverse(s.begin(), s.end()); return s; }
std::vector<int> sorted(std::vector<int> v) { std::sort(v.begin(), v.end()); return v; }
