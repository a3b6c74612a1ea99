// The boundary between a Go program and its assert test (`verifiers.code.boundary.go`).
//
// The same file is built into both programs, in package main. The program's side answers
// calls (referee_serve), the test's side calls through stubs generated from the program's
// signatures (referee_call) and prints the verdict (referee_run_test); the channel's fds
// are named by REFEREE_CHANNEL_IN and REFEREE_CHANNEL_OUT. Neither binary holds the other
// side's code: the test's expected values never exist in the program's process.
//
// Values cross by the type both sides declare (the same text, made of Go's predeclared
// types only), with reflect: bool one byte; integers 64 bits (checked against the
// receiving type's range); floating point the bits of a float64, complex two of them; a
// string a 64-bit count and its bytes (any bytes, not only UTF-8); a slice or a map a
// presence byte (nil or not), a count and its items (a map's as key, value); an array its
// items; an interface value a presence byte, then, for error, its message, and for an
// empty interface the name of its dynamic type (predeclared types and the composites
// above only: a type of the program's never crosses) and its value. A message is a
// 32-bit length, then its bytes: a call is the function's index and its arguments; a
// reply is 0, the results and the arguments whose type holds a slice, a map or an
// interface (what a Go caller would see changed), or 1 and the text of the program's
// panic, or 2 and the type of a result that cannot cross. Everything read is checked
// against what is left of its message: a program that writes anything else to the
// channel fails the test, and can neither overrun nor starve the test's side.

package main

// Imported under names of ours: a program's (or test's) package-level `errors` or
// `strings` would otherwise collide with a file's import of that name.
import (
	referee_binary "encoding/binary"
	referee_json "encoding/json"
	referee_errors "errors"
	referee_fmt "fmt"
	referee_math "math"
	referee_os "os"
	referee_reflect "reflect"
	referee_strconv "strconv"
	referee_strings "strings"
	referee_sync "sync"
)

const (
	referee_max_message = 64 << 20
	referee_max_items   = 1 << 22
	referee_max_depth   = 64
	referee_max_array   = 1 << 20
)

var referee_error_type = referee_reflect.TypeOf((*error)(nil)).Elem()
var referee_any_type = referee_reflect.TypeOf((*interface{})(nil)).Elem()

// A malformed message: panicked with while reading, recovered by the side's loop.
type referee_broken string

// A value that cannot cross (a type of the program's, a pointer, a function...).
type referee_unsupported string

type referee_writer struct{ bytes []byte }

func (w *referee_writer) byte1(b byte) { w.bytes = append(w.bytes, b) }

func (w *referee_writer) u64(v uint64) {
	var b [8]byte
	referee_binary.LittleEndian.PutUint64(b[:], v)
	w.bytes = append(w.bytes, b[:]...)
}

func (w *referee_writer) text(s string) {
	w.u64(uint64(len(s)))
	w.bytes = append(w.bytes, s...)
}

type referee_reader struct {
	bytes []byte
	at    int
	items int
}

func (r *referee_reader) left() int { return len(r.bytes) - r.at }

func (r *referee_reader) take(n int) []byte {
	if n < 0 || r.left() < n {
		panic(referee_broken("a message ends too soon"))
	}
	r.at += n
	return r.bytes[r.at-n : r.at]
}

func (r *referee_reader) byte1() byte { return r.take(1)[0] }

func (r *referee_reader) u64() uint64 { return referee_binary.LittleEndian.Uint64(r.take(8)) }

// A count of items that follow: never more than the bytes left, nor, over a message, than
// referee_max_items.
func (r *referee_reader) count() int {
	n := r.u64()
	if n > uint64(r.left()) {
		panic(referee_broken("a count larger than its message"))
	}
	r.items += int(n)
	if r.items > referee_max_items {
		panic(referee_broken("a message with too many items"))
	}
	return int(n)
}

func (r *referee_reader) text() string { return string(r.take(r.count())) }

func (r *referee_reader) presence() bool {
	switch r.byte1() {
	case 0:
		return false
	case 1:
		return true
	}
	panic(referee_broken("a presence byte that is neither 0 nor 1"))
}

// Write v (of the type both sides declare).
func referee_put(w *referee_writer, v referee_reflect.Value, depth int) {
	if depth > referee_max_depth {
		panic(referee_unsupported("a value nested deeper than 64"))
	}
	switch v.Kind() {
	case referee_reflect.Bool:
		if v.Bool() {
			w.byte1(1)
		} else {
			w.byte1(0)
		}
	case referee_reflect.Int, referee_reflect.Int8, referee_reflect.Int16, referee_reflect.Int32, referee_reflect.Int64:
		w.u64(uint64(v.Int()))
	case referee_reflect.Uint, referee_reflect.Uint8, referee_reflect.Uint16, referee_reflect.Uint32, referee_reflect.Uint64, referee_reflect.Uintptr:
		w.u64(v.Uint())
	case referee_reflect.Float32, referee_reflect.Float64:
		w.u64(referee_math.Float64bits(v.Float()))
	case referee_reflect.Complex64, referee_reflect.Complex128:
		c := v.Complex()
		w.u64(referee_math.Float64bits(real(c)))
		w.u64(referee_math.Float64bits(imag(c)))
	case referee_reflect.String:
		w.text(v.String())
	case referee_reflect.Slice:
		if v.IsNil() {
			w.byte1(0)
			return
		}
		w.byte1(1)
		w.u64(uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			referee_put(w, v.Index(i), depth+1)
		}
	case referee_reflect.Array:
		for i := 0; i < v.Len(); i++ {
			referee_put(w, v.Index(i), depth+1)
		}
	case referee_reflect.Map:
		if v.IsNil() {
			w.byte1(0)
			return
		}
		w.byte1(1)
		w.u64(uint64(v.Len()))
		for it := v.MapRange(); it.Next(); {
			referee_put(w, it.Key(), depth+1)
			referee_put(w, it.Value(), depth+1)
		}
	case referee_reflect.Interface:
		referee_put_interface(w, v, depth)
	default:
		panic(referee_unsupported(v.Type().String()))
	}
}

func referee_put_interface(w *referee_writer, v referee_reflect.Value, depth int) {
	if v.IsNil() {
		w.byte1(0)
		return
	}
	if v.Type() == referee_error_type {
		w.byte1(1)
		w.text(referee_message(v.Interface()))
		return
	}
	if v.Type().NumMethod() != 0 {
		panic(referee_unsupported(v.Type().String()))
	}
	inner := v.Elem()
	name, ok := referee_type_name(inner.Type(), 0)
	if !ok {
		panic(referee_unsupported(inner.Type().String()))
	}
	w.byte1(1)
	w.text(name)
	referee_put(w, inner, depth+1)
}

// The name of a dynamic type that may cross, as referee_parse_type reads it.
func referee_type_name(t referee_reflect.Type, depth int) (string, bool) {
	if depth > referee_max_depth {
		return "", false
	}
	if t.Name() != "" {
		_, basic := referee_basic[t.Name()]
		return t.Name(), basic && t.PkgPath() == "" && t.Kind() != referee_reflect.Interface
	}
	switch t.Kind() {
	case referee_reflect.Slice:
		elem, ok := referee_type_name(t.Elem(), depth+1)
		return "[]" + elem, ok
	case referee_reflect.Array:
		elem, ok := referee_type_name(t.Elem(), depth+1)
		return "[" + referee_strconv.Itoa(t.Len()) + "]" + elem, ok
	case referee_reflect.Map:
		key, ok := referee_type_name(t.Key(), depth+1)
		elem, ok2 := referee_type_name(t.Elem(), depth+1)
		return "map[" + key + "]" + elem, ok && ok2
	case referee_reflect.Interface:
		return "interface{}", t.NumMethod() == 0
	}
	return "", false
}

var referee_basic = map[string]referee_reflect.Type{
	"bool": referee_reflect.TypeOf(false), "string": referee_reflect.TypeOf(""),
	"int": referee_reflect.TypeOf(int(0)), "int8": referee_reflect.TypeOf(int8(0)),
	"int16": referee_reflect.TypeOf(int16(0)), "int32": referee_reflect.TypeOf(int32(0)),
	"int64": referee_reflect.TypeOf(int64(0)), "uint": referee_reflect.TypeOf(uint(0)),
	"uint8": referee_reflect.TypeOf(uint8(0)), "uint16": referee_reflect.TypeOf(uint16(0)),
	"uint32": referee_reflect.TypeOf(uint32(0)), "uint64": referee_reflect.TypeOf(uint64(0)),
	"uintptr": referee_reflect.TypeOf(uintptr(0)), "float32": referee_reflect.TypeOf(float32(0)),
	"float64": referee_reflect.TypeOf(float64(0)), "complex64": referee_reflect.TypeOf(complex64(0)),
	"complex128": referee_reflect.TypeOf(complex128(0)),
}

// The type a name written by referee_type_name names, and the rest of the text.
func referee_parse_type(s string, depth int) (referee_reflect.Type, string) {
	if depth > referee_max_depth {
		panic(referee_broken("a type nested deeper than 64"))
	}
	switch {
	case referee_strings.HasPrefix(s, "interface{}"):
		return referee_any_type, s[len("interface{}"):]
	case referee_strings.HasPrefix(s, "[]"):
		elem, rest := referee_parse_type(s[2:], depth+1)
		return referee_reflect.SliceOf(elem), rest
	case referee_strings.HasPrefix(s, "map["):
		key, rest := referee_parse_type(s[4:], depth+1)
		if !referee_strings.HasPrefix(rest, "]") || !key.Comparable() {
			panic(referee_broken("a value of no known type"))
		}
		elem, rest := referee_parse_type(rest[1:], depth+1)
		return referee_reflect.MapOf(key, elem), rest
	case referee_strings.HasPrefix(s, "["):
		end := referee_strings.IndexByte(s, ']')
		if end < 0 {
			panic(referee_broken("a value of no known type"))
		}
		n, err := referee_strconv.Atoi(s[1:end])
		if err != nil || n < 0 || n > referee_max_array {
			panic(referee_broken("a value of no known type"))
		}
		elem, rest := referee_parse_type(s[end+1:], depth+1)
		if elem.Size() != 0 && uintptr(n) > referee_max_message/elem.Size() {
			panic(referee_broken("a value of no known type"))
		}
		return referee_reflect.ArrayOf(n, elem), rest
	}
	end := 0
	for end < len(s) && (s[end] >= 'a' && s[end] <= 'z' || s[end] >= '0' && s[end] <= '9') {
		end++
	}
	t, ok := referee_basic[s[:end]]
	if !ok {
		panic(referee_broken("a value of no known type"))
	}
	return t, s[end:]
}

// Read into v (settable, of the type both sides declare).
func referee_get(r *referee_reader, v referee_reflect.Value, depth int) {
	if depth > referee_max_depth {
		panic(referee_broken("a value nested deeper than 64"))
	}
	switch v.Kind() {
	case referee_reflect.Bool:
		switch r.byte1() {
		case 0:
			v.SetBool(false)
		case 1:
			v.SetBool(true)
		default:
			panic(referee_broken("a bool that is neither 0 nor 1"))
		}
	case referee_reflect.Int, referee_reflect.Int8, referee_reflect.Int16, referee_reflect.Int32, referee_reflect.Int64:
		x := int64(r.u64())
		if v.OverflowInt(x) {
			panic(referee_broken("an integer out of its type's range"))
		}
		v.SetInt(x)
	case referee_reflect.Uint, referee_reflect.Uint8, referee_reflect.Uint16, referee_reflect.Uint32, referee_reflect.Uint64, referee_reflect.Uintptr:
		x := r.u64()
		if v.OverflowUint(x) {
			panic(referee_broken("an integer out of its type's range"))
		}
		v.SetUint(x)
	case referee_reflect.Float32, referee_reflect.Float64:
		v.SetFloat(referee_math.Float64frombits(r.u64()))
	case referee_reflect.Complex64, referee_reflect.Complex128:
		re := referee_math.Float64frombits(r.u64())
		v.SetComplex(complex(re, referee_math.Float64frombits(r.u64())))
	case referee_reflect.String:
		v.SetString(r.text())
	case referee_reflect.Slice:
		if !r.presence() {
			v.Set(referee_reflect.Zero(v.Type()))
			return
		}
		n := r.count()
		s := referee_reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			referee_get(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case referee_reflect.Array:
		for i := 0; i < v.Len(); i++ {
			referee_get(r, v.Index(i), depth+1)
		}
	case referee_reflect.Map:
		referee_get_map(r, v, depth)
	case referee_reflect.Interface:
		referee_get_interface(r, v, depth)
	default:
		panic(referee_broken("a value of no known type"))
	}
}

func referee_get_map(r *referee_reader, v referee_reflect.Value, depth int) {
	if !r.presence() {
		v.Set(referee_reflect.Zero(v.Type()))
		return
	}
	n := r.count()
	m := referee_reflect.MakeMapWithSize(v.Type(), n)
	for i := 0; i < n; i++ {
		key := referee_reflect.New(v.Type().Key()).Elem()
		referee_get(r, key, depth+1)
		value := referee_reflect.New(v.Type().Elem()).Elem()
		referee_get(r, value, depth+1)
		if key.Kind() == referee_reflect.Interface && !key.IsNil() && !key.Elem().Type().Comparable() {
			panic(referee_broken("a map key that cannot be hashed"))
		}
		m.SetMapIndex(key, value)
	}
	v.Set(m)
}

func referee_get_interface(r *referee_reader, v referee_reflect.Value, depth int) {
	if !r.presence() {
		v.Set(referee_reflect.Zero(v.Type()))
		return
	}
	if v.Type() == referee_error_type {
		v.Set(referee_reflect.ValueOf(referee_errors.New(r.text())))
		return
	}
	if v.Type().NumMethod() != 0 {
		panic(referee_broken("a value of no known type"))
	}
	t, rest := referee_parse_type(r.text(), 0)
	if rest != "" {
		panic(referee_broken("a value of no known type"))
	}
	inner := referee_reflect.New(t).Elem()
	referee_get(r, inner, depth+1)
	v.Set(inner)
}

// Make dst (the test's argument) hold what the program left in its copy, src, as a Go
// caller sees it changed: a slice's items (its length is the caller's), a map's entries,
// and, inside them, what is shared.
func referee_update(dst, src referee_reflect.Value) {
	switch dst.Kind() {
	case referee_reflect.Slice:
		if dst.IsNil() || src.IsNil() {
			return
		}
		for i := 0; i < dst.Len() && i < src.Len(); i++ {
			referee_update_item(dst.Index(i), src.Index(i))
		}
	case referee_reflect.Map:
		if dst.IsNil() || src.IsNil() {
			return
		}
		for _, key := range dst.MapKeys() {
			if !src.MapIndex(key).IsValid() {
				dst.SetMapIndex(key, referee_reflect.Value{})
			}
		}
		for it := src.MapRange(); it.Next(); {
			dst.SetMapIndex(it.Key(), it.Value())
		}
	case referee_reflect.Array:
		for i := 0; i < dst.Len(); i++ {
			referee_update(dst.Index(i), src.Index(i))
		}
	case referee_reflect.Interface:
		if !dst.IsNil() && !src.IsNil() && dst.Elem().Type() == src.Elem().Type() {
			referee_update(dst.Elem(), src.Elem())
		}
	}
}

// An item of a slice (it lives in the caller's backing array): one of the same shape is
// updated in place, another replaced.
func referee_update_item(dst, src referee_reflect.Value) {
	same := dst.Kind() == referee_reflect.Slice && !dst.IsNil() && !src.IsNil() && dst.Len() == src.Len()
	same = same || dst.Kind() == referee_reflect.Map && !dst.IsNil() && !src.IsNil()
	same = same || dst.Kind() == referee_reflect.Array
	if same {
		referee_update(dst, src)
	} else {
		dst.Set(src)
	}
}

// The text of a panic's value or an error, whatever its methods do.
func referee_message(value interface{}) (text string) {
	defer func() {
		if recover() != nil {
			text = "<unprintable>"
		}
	}()
	text = referee_fmt.Sprint(value)
	if len(text) > 2000 {
		text = text[:2000]
	}
	return text
}

func referee_channel(name string, mode string) *referee_os.File {
	fd, err := referee_strconv.Atoi(referee_os.Getenv(name))
	if err != nil {
		return nil
	}
	return referee_os.NewFile(uintptr(fd), mode)
}

func referee_send(out *referee_os.File, body []byte) bool {
	message := make([]byte, 4, 4+len(body))
	referee_binary.LittleEndian.PutUint32(message, uint32(len(body)))
	message = append(message, body...)
	_, err := out.Write(message)
	return err == nil
}

// The next message; false at the end of the channel (panics referee_broken for one longer
// than referee_max_message or cut short).
func referee_receive(in *referee_os.File) ([]byte, bool) {
	var size [4]byte
	n, _ := referee_read_full(in, size[:])
	if n == 0 {
		return nil, false
	}
	if n < 4 {
		panic(referee_broken("a message cut short"))
	}
	length := referee_binary.LittleEndian.Uint32(size[:])
	if length > referee_max_message {
		panic(referee_broken("a message larger than 64 MiB"))
	}
	body := make([]byte, length)
	if got, _ := referee_read_full(in, body); got < int(length) {
		panic(referee_broken("a message cut short"))
	}
	return body, true
}

func referee_read_full(in *referee_os.File, into []byte) (int, error) {
	got := 0
	for got < len(into) {
		n, err := in.Read(into[got:])
		got += n
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// ---- the program's side ----------------------------------------------------------------

// One of the program's functions, served: read its arguments, call it, write 0, its
// results and its arguments that go back (generated from its signature).
type referee_serving func(in *referee_reader, out *referee_writer)

// Answer calls until the tests' side closes the channel.
func referee_serve(calls []referee_serving) {
	in := referee_channel("REFEREE_CHANNEL_IN", "referee-in")
	out := referee_channel("REFEREE_CHANNEL_OUT", "referee-out")
	if in == nil || out == nil {
		referee_os.Exit(2)
	}
	for {
		body, more := referee_receive_or_exit(in)
		if !more {
			return
		}
		if !referee_send(out, referee_answer(calls, body)) {
			return
		}
	}
}

func referee_receive_or_exit(in *referee_os.File) (body []byte, more bool) {
	defer referee_exit_if_broken()
	return referee_receive(in)
}

func referee_exit_if_broken() {
	if r := recover(); r != nil {
		referee_fmt.Fprintln(referee_os.Stderr, "referee:", r)
		referee_os.Exit(2)
	}
}

// The reply to one call: a broken call ends the program (status 2), the function's panic
// goes back as its text, a result that cannot cross as its type.
func referee_answer(calls []referee_serving, body []byte) (reply []byte) {
	in := &referee_reader{bytes: body}
	out := &referee_writer{}
	var index uint64
	func() {
		defer referee_exit_if_broken()
		index = in.u64()
		if index >= uint64(len(calls)) {
			panic(referee_broken("a call to no function"))
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			if broken, ok := r.(referee_broken); ok {
				referee_fmt.Fprintln(referee_os.Stderr, "referee:", broken)
				referee_os.Exit(2)
			}
			failed := &referee_writer{}
			if unsupported, ok := r.(referee_unsupported); ok {
				failed.byte1(2)
				failed.text(string(unsupported))
			} else {
				failed.byte1(1)
				failed.text(referee_message(r))
			}
			reply = failed.bytes
		}
	}()
	calls[index](in, out)
	return out.bytes
}

// Arguments: what a served function reads before its call (then nothing may be left).
func referee_arg(in *referee_reader, p interface{}) {
	referee_get(in, referee_reflect.ValueOf(p).Elem(), 0)
}

func referee_done(in *referee_reader) {
	if in.left() != 0 {
		panic(referee_broken("a message with bytes left over"))
	}
}

// A result or an argument that goes back, after the call.
func referee_result(out *referee_writer, p interface{}) {
	referee_put(out, referee_reflect.ValueOf(p).Elem(), 0)
}

// ---- the test's side -------------------------------------------------------------------

var (
	referee_channel_lock      referee_sync.Mutex
	referee_conclude_on_panic bool
	referee_key               string
	referee_in                *referee_os.File
	referee_out               *referee_os.File
	referee_gone              bool
	// whether the test has called the program: a verdict reached without a call is the
	// reference's (it would be the same for every program)
	referee_called bool
	referee_flags  = map[string]bool{}
	referee_stdout = referee_os.NewFile(1, "stdout")
)

// A call to the program's function `name` from its stub.
type referee_call struct {
	name string
	out  referee_writer
	in   *referee_reader
}

func referee_begin(index uint64, name string) *referee_call {
	call := &referee_call{name: name}
	call.out.u64(index)
	return call
}

// An argument, by pointer (its static type is what crosses).
func (c *referee_call) put(p interface{}) {
	defer c.unsupported()
	referee_put(&c.out, referee_reflect.ValueOf(p).Elem(), 0)
}

func (c *referee_call) unsupported() {
	if r := recover(); r != nil {
		if what, ok := r.(referee_unsupported); ok {
			referee_harness_error("the test passes a " + string(what) + " to " + c.name)
		}
		panic(r)
	}
}

// Send the call; read the reply's kind. The program's panic is raised here, as the call's.
func (c *referee_call) exchange() {
	var body []byte
	var more bool // false: the program is gone (the call could not be sent, or no reply)
	referee_start()
	func() {
		// one call on the channel at a time: a test may call from goroutines
		referee_channel_lock.Lock()
		defer referee_channel_lock.Unlock()
		referee_called = true
		if !referee_gone && referee_send(referee_out, c.out.bytes) {
			defer c.broken()
			body, more = referee_receive(referee_in)
		}
	}()
	if !more {
		c.gone()
	}
	c.in = &referee_reader{bytes: body}
	var kind byte
	var text string
	func() {
		defer c.broken()
		kind = c.in.byte1()
		if kind > 2 {
			panic(referee_broken("a reply of no known kind"))
		}
		if kind != 0 {
			text = c.in.text()
			referee_done(c.in)
		}
	}()
	switch kind {
	case 0:
		return
	case 1:
		panicked := referee_fmt.Sprintf("the program panicked in %s: %s", c.name, text)
		if referee_conclude_on_panic {
			referee_conclude(false, panicked)
		}
		panic(panicked)
	case 2:
		referee_flags["custom_type"] = true
		referee_conclude(false, "the program's "+c.name+" returned a "+text+", which cannot cross")
	}
	c.fail("a reply of no known kind")
}

func (c *referee_call) gone() {
	referee_gone = true
	referee_flags["early_exit"] = true
	referee_conclude(false, "the program ended during a call to "+c.name)
}

func (c *referee_call) broken() {
	if r := recover(); r != nil {
		if why, ok := r.(referee_broken); ok {
			c.fail(string(why))
		}
		panic(r)
	}
}

func (c *referee_call) fail(why string) {
	referee_conclude(false, "the program's reply to "+c.name+": "+why)
}

// A result, or an argument as the program left it (`back`), by pointer.
func (c *referee_call) get(p interface{}) {
	defer c.broken()
	referee_get(c.in, referee_reflect.ValueOf(p).Elem(), 0)
}

func (c *referee_call) back(p interface{}) {
	defer c.broken()
	target := referee_reflect.ValueOf(p).Elem()
	changed := referee_reflect.New(target.Type()).Elem()
	referee_get(c.in, changed, 0)
	referee_update(target, changed)
}

func (c *referee_call) finish() {
	defer c.broken()
	referee_done(c.in)
}

// Say how the test ended (its own output first) and end the process.
func referee_conclude(passed bool, message string, flag ...string) {
	for _, f := range flag {
		referee_flags[f] = true
	}
	flags := []string{}
	for f := range referee_flags {
		flags = append(flags, f)
	}
	verdict := map[string]interface{}{"passed": passed, "message": message, "flags": flags}
	if !referee_called {
		verdict["called"] = false
	}
	referee_print_verdict(verdict)
}

func referee_print_verdict(verdict map[string]interface{}) {
	text, _ := referee_json.Marshal(verdict)
	referee_stdout.Write([]byte("\n@@referee-verdict@@ " + referee_key + " " + string(text) + "\n"))
	referee_os.Exit(0)
}

// The test itself cannot be run as given (the reference's fault, never the program's 0).
func referee_harness_error(what string) {
	referee_print_verdict(map[string]interface{}{"passed": false, "harness_error": what})
}

// The test's referee_os.Exit and log.Fatal (rewritten to these): a verdict from the status.
func referee_exit(status int) {
	if status == 0 {
		referee_conclude(!referee_gone, "")
	}
	referee_conclude(false, "the test exited with status "+referee_strconv.Itoa(status))
}

func referee_fatal(text string) {
	referee_os.Stderr.WriteString(text)
	referee_conclude(false, "the test failed: "+referee_strings.TrimSpace(text))
}

func referee_fatalf(format string, args ...interface{}) {
	referee_fatal(referee_fmt.Sprintf(format, args...))
}

func referee_fatalln(args ...interface{}) { referee_fatal(referee_fmt.Sprintln(args...)) }

func referee_fatal_(args ...interface{}) { referee_fatal(referee_fmt.Sprint(args...)) }

// The verdict's key: the first line of stdin (the rest is the test's), read a byte at a
// time so that none of the rest is taken.
func referee_read_key() {
	var key []byte
	var b [1]byte
	for len(key) < 64 {
		if n, err := referee_os.Stdin.Read(b[:]); n == 0 || err != nil || b[0] == '\n' {
			break
		}
		key = append(key, b[0])
	}
	referee_key = string(key)
}

// Run the test's main (renamed): the verdict is printed however it ends.
func referee_run_test(test_main func()) {
	referee_start()
	defer func() {
		if r := recover(); r != nil {
			referee_conclude(false, "the test panicked: "+referee_message(r))
		}
	}()
	test_main()
	referee_conclude(!referee_gone, "")
}

// Run `go test`'s tests (`run` is the TestMain's m.Run): the verdict is their status. A
// panic of the program's fails the run at once: under `testing` a panic in a test ends
// the process without a verdict.
func referee_run_tests(run func() int) {
	referee_start()
	referee_conclude_on_panic = true
	report := referee_tee()
	status := run()
	if status != 0 {
		referee_conclude(false, "go test failed: "+report())
	}
	referee_conclude(!referee_gone, "")
}

// Copy what the tests print to the real stdout, keeping the lines that say why a test
// failed (`t.Errorf`'s, indented under `--- FAIL`) for the verdict; `report` waits for
// the copy and returns them.
func referee_tee() (report func() string) {
	reader, writer, err := referee_os.Pipe()
	if err != nil {
		return func() string { return "(its report is in the output)" }
	}
	real := referee_os.Stdout
	referee_os.Stdout = writer
	done := make(chan string)
	go func() {
		kept, line := []string{}, []byte{}
		buffer := make([]byte, 4096)
		for {
			n, err := reader.Read(buffer)
			real.Write(buffer[:n])
			for _, b := range buffer[:n] {
				if b != '\n' {
					line = append(line, b)
					continue
				}
				text := referee_strings.TrimSpace(string(line))
				if len(kept) < 4 && text != "" && !referee_strings.HasPrefix(text, "---") &&
					!referee_strings.HasPrefix(text, "===") && text != "FAIL" {
					kept = append(kept, text)
				}
				line = line[:0]
			}
			if err != nil {
				done <- referee_strings.Join(kept, "; ")
				return
			}
		}
	}()
	return func() string {
		referee_os.Stdout = real
		writer.Close()
		return <-done
	}
}

// Deferred first in every function of a `go test` test taking a *testing.T: its panic
// fails that test (the testing package would end the process on it, with no verdict).
func referee_guard(t interface {
	Errorf(format string, args ...interface{})
}) {
	if r := recover(); r != nil {
		t.Errorf("the test panicked: %s", referee_message(r))
	}
}

// Read the key and open the channel, once: from the test's main, or from the first
// call, which may come before it (a test's package-level `var r = F(3)` runs first).
func referee_start() { referee_start_once.Do(referee_open) }

var referee_start_once referee_sync.Once

func referee_open() {
	referee_read_key()
	referee_in = referee_channel("REFEREE_CHANNEL_IN", "referee-in")
	referee_out = referee_channel("REFEREE_CHANNEL_OUT", "referee-out")
	if referee_in == nil || referee_out == nil {
		referee_harness_error("no channel to the program")
	}
	// the test's own code starts: a process ending after this with no verdict (a panic
	// in a goroutine of the test's) ended in it
	referee_stdout.Write([]byte("\n@@referee-verdict@@ " + referee_key + " {\"started\": true}\n"))
}
