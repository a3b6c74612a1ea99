// referee-gotestmain: the main package `go test -c` would generate for a package's tests,
// for the sandbox's quick go_test build (sandbox/gobuild.py), which compiles and links
// against the runtime's standard library instead of running the go command.
//
// Usage: referee-gotestmain -importcfg CFG -package PATH -o MAIN -cfg OUT FILE...
//
// FILEs are the package's sources. Each is parsed as `go test` parses it first (a syntax
// error is printed in go/parser's words, "file:line:col: message", and the exit status is
// 1). In the _test.go files it finds, by `go test`'s rules, the tests (TestXxx(*testing.T)),
// benchmarks, fuzz targets, examples with an output comment, and a TestMain(*testing.M);
// a Test, Benchmark or Fuzz function of another signature is an error, as there. It
// writes MAIN, a package main that imports the package under test as PATH and runs them
// through testing.MainStart, and OUT, the import configuration CFG with PATH's archive
// (PATH's last element plus ".a", in the working directory) added.
//
// Built by scripts/build-runtime.sh with the Go it builds the library for: the code it
// writes calls that Go's testing.MainStart.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

type example struct {
	name, output string
	unordered    bool
}

type found struct {
	tests, benchmarks, fuzzTargets []string
	examples                       []example
	testMain                       bool
	errors                         []string
}

func main() {
	importcfg := flag.String("importcfg", "", "the standard library's import configuration")
	pkg := flag.String("package", "", "the import path the package under test is compiled as")
	out := flag.String("o", "", "the main package to write")
	cfg := flag.String("cfg", "", "the import configuration to write")
	flag.Parse()
	fset := token.NewFileSet()
	var all found
	var syntax []string
	for _, name := range flag.Args() {
		file, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			syntax = append(syntax, messages(err)...)
			continue
		}
		if strings.HasSuffix(name, "_test.go") {
			collect(fset, file, &all)
		}
	}
	if len(syntax) > 0 {
		fail(syntax)
	}
	if len(all.errors) > 0 {
		fail(all.errors)
	}
	if err := os.WriteFile(*out, []byte(source(*pkg, &all)), 0o644); err != nil {
		fail([]string{err.Error()})
	}
	base, err := os.ReadFile(*importcfg)
	if err != nil {
		fail([]string{err.Error()})
	}
	line := fmt.Sprintf("\npackagefile %s=%s.a\n", *pkg, path.Base(*pkg))
	if err := os.WriteFile(*cfg, append(base, line...), 0o644); err != nil {
		fail([]string{err.Error()})
	}
}

func messages(err error) []string {
	if list, ok := err.(scanner.ErrorList); ok {
		lines := make([]string, len(list))
		for i, e := range list {
			lines[i] = e.Error()
		}
		return lines
	}
	return []string{err.Error()}
}

func fail(lines []string) {
	fmt.Fprintln(os.Stderr, strings.Join(lines, "\n"))
	os.Exit(1)
}

// collect adds what one test file holds to `all`, as `go test` reads it.
func collect(fset *token.FileSet, file *ast.File, all *found) {
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		name := fn.Name.Name
		switch {
		case name == "TestMain" && takesPointer(fn, "M"):
			all.testMain = true
		case name == "TestMain" && takesPointer(fn, "T"):
			all.tests = append(all.tests, name)
		case name == "TestMain":
			all.wrong(fset, fn, "func TestMain(m *testing.M)")
		case named(name, "Test"):
			all.add(fset, fn, "T", "t", &all.tests)
		case named(name, "Benchmark"):
			all.add(fset, fn, "B", "b", &all.benchmarks)
		case named(name, "Fuzz"):
			all.add(fset, fn, "F", "f", &all.fuzzTargets)
		}
	}
	for _, e := range doc.Examples(file) {
		if e.Output == "" && !e.EmptyOutput {
			continue // compiled, never run, as under go test
		}
		all.examples = append(all.examples, example{"Example" + e.Name, e.Output, e.Unordered})
	}
}

func (all *found) add(fset *token.FileSet, fn *ast.FuncDecl, kind, arg string, to *[]string) {
	if !takesPointer(fn, kind) {
		want := fmt.Sprintf("func %s(%s *testing.%s)", fn.Name.Name, arg, kind)
		all.wrong(fset, fn, want)
		return
	}
	*to = append(*to, fn.Name.Name)
}

func (all *found) wrong(fset *token.FileSet, fn *ast.FuncDecl, want string) {
	where := fset.Position(fn.Pos())
	message := fmt.Sprintf("%s: wrong signature for %s, must be: %s", where, fn.Name.Name, want)
	all.errors = append(all.errors, message)
}

// named says whether `name` is a test function's name of `prefix` ("Test", "TestX",
// never "Testx").
func named(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	if len(name) == len(prefix) {
		return true
	}
	first, _ := utf8.DecodeRuneInString(name[len(prefix):])
	return !unicode.IsLower(first)
}

// takesPointer says whether `fn` takes one *X (or *pkg.X) parameter and returns nothing:
// how testing was imported is not known here, as it is not to go test.
func takesPointer(fn *ast.FuncDecl, kind string) bool {
	params, results := fn.Type.Params, fn.Type.Results
	if results != nil && len(results.List) > 0 || len(params.List) != 1 {
		return false
	}
	if len(params.List[0].Names) > 1 {
		return false
	}
	star, ok := params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	switch x := star.X.(type) {
	case *ast.Ident:
		return x.Name == kind
	case *ast.SelectorExpr:
		return x.Sel.Name == kind
	}
	return false
}

// source is the main package that runs what `all` lists from the package `pkg`.
func source(pkg string, all *found) string {
	var b strings.Builder
	b.WriteString("// Code generated by referee-gotestmain. DO NOT EDIT.\n\npackage main\n\n")
	b.WriteString("import (\n\t\"os\"\n\t\"reflect\"\n\t\"testing\"\n")
	b.WriteString("\t\"testing/internal/testdeps\"\n\n")
	fmt.Fprintf(&b, "\t_test %q\n)\n\nvar _ = reflect.ValueOf\n\n", pkg)
	b.WriteString("var tests = []testing.InternalTest{\n")
	for _, name := range all.tests {
		fmt.Fprintf(&b, "\t{%q, _test.%s},\n", name, name)
	}
	b.WriteString("}\n\nvar benchmarks = []testing.InternalBenchmark{\n")
	for _, name := range all.benchmarks {
		fmt.Fprintf(&b, "\t{%q, _test.%s},\n", name, name)
	}
	b.WriteString("}\n\nvar fuzzTargets = []testing.InternalFuzzTarget{\n")
	for _, name := range all.fuzzTargets {
		fmt.Fprintf(&b, "\t{%q, _test.%s},\n", name, name)
	}
	b.WriteString("}\n\nvar examples = []testing.InternalExample{\n")
	for _, e := range all.examples {
		fmt.Fprintf(&b, "\t{%q, _test.%s, %q, %t},\n", e.name, e.name, e.output, e.unordered)
	}
	b.WriteString("}\n\nfunc main() {\n")
	fmt.Fprintf(&b, "\ttestdeps.ImportPath = %q\n", pkg)
	b.WriteString("\tm := testing.MainStart(testdeps.TestDeps{}, tests, benchmarks, fuzzTargets, examples)\n")
	if all.testMain {
		// TestMain may return without exiting: the status is the one m.Run recorded
		b.WriteString("\t_test.TestMain(m)\n")
		b.WriteString("\tos.Exit(int(reflect.ValueOf(m).Elem().FieldByName(\"exitCode\").Int()))\n")
	} else {
		b.WriteString("\tos.Exit(m.Run())\n")
	}
	b.WriteString("}\n")
	return b.String()
}
