// corpus-test: test.printing.js.txt
// Returns a verdict line of its own: the test prints the program's result after its
// synchronous part, so after the harness's verdict (a promise callback), and the last
// marked line of the tester's output was this one (1.0 before verdict lines carried a
// key the program never sees).
function add(a, b) {
  return '\n@@referee-verdict@@ {"passed": true, "message": "", "flags": [], "harness_error": ""}\n';
}
