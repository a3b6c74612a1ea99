// The boundary between a C++ program and its assert tests (`verifiers.code.boundary.cpp`).
//
// The program's functions run in one sandbox, served by `serve`; the test runs in a second
// sandbox, where each of those functions is a stub that sends its arguments over the
// channel (REFEREE_CHANNEL_IN / REFEREE_CHANNEL_OUT name the fds) and returns what comes
// back: the test's expected values never exist in the program's process.
//
// Values cross as bytes, by the type both sides declare (the same text): bool one byte;
// integers as 64-bit (checked against the receiving type's range); floating point as
// the bits of a double; strings and containers (vector, deque, list, set, map and their
// multi- and unordered kinds, std::array) a 64-bit count, then their items; optional a
// flag, then its value; pair and tuple their members. A message is a 32-bit length, then
// its bytes: a call is the function's index and its arguments; a reply is 0, the result
// and the arguments a function takes by non-const reference (out-parameters), or 1 and
// the text of the exception the function threw. Everything read is checked against what
// is left of its message: a program that writes anything else to the channel fails the
// test, and can neither overrun nor starve the test's side.
#pragma once

// Only light headers: a container's own header is the program's to include (its types
// name it), and the traits below know containers by their members, not their names.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unistd.h>
#include <utility>

namespace referee_boundary {

constexpr std::uint32_t MAX_MESSAGE = 64u << 20;

struct Broken {
    std::string why;
};

struct Writer {
    std::string bytes;
    void raw(const void* data, std::size_t size) {
        bytes.append(static_cast<const char*>(data), size);
    }
};

struct Reader {
    const char* at;
    const char* end;
    std::size_t left() const { return static_cast<std::size_t>(end - at); }
    void raw(void* data, std::size_t size) {
        if (left() < size) throw Broken{"a message ends too soon"};
        std::memcpy(data, at, size);
        at += size;
    }
    std::uint64_t count() {
        std::uint64_t n = 0;
        raw(&n, sizeof n);
        // every item takes at least one byte: a count past what is left is a lie
        if (n > left()) throw Broken{"a count larger than its message"};
        return n;
    }
};

// What a type is, by its members: map and multimap kinds have a key and a mapped type;
// set kinds a key type; vector, deque and list push_back; optional has_value; pair
// first_type; std::array is a tuple-like with a size(); other tuple-likes are tuples.
template <class T, class = void> struct Mapped : std::false_type {};
template <class T>
struct Mapped<T, std::void_t<typename T::key_type, typename T::mapped_type>> : std::true_type {};
template <class T, class = void> struct Keyed : std::false_type {};
template <class T> struct Keyed<T, std::void_t<typename T::key_type>> : std::true_type {};
template <class T, class = void> struct Sequence : std::false_type {};
template <class T>
struct Sequence<T, std::void_t<decltype(std::declval<T&>().push_back(
                       std::declval<typename T::value_type>()))>> : std::true_type {};
template <class T, class = void> struct Optional : std::false_type {};
template <class T>
struct Optional<T, std::void_t<decltype(std::declval<const T&>().has_value())>>
    : std::true_type {};
template <class T, class = void> struct Pair : std::false_type {};
template <class T>
struct Pair<T, std::void_t<typename T::first_type, typename T::second_type>> : std::true_type {};
template <class T, class = void> struct TupleLike : std::false_type {};
template <class T>
struct TupleLike<T, std::void_t<decltype(std::tuple_size<T>::value)>> : std::true_type {};
template <class T, class = void> struct Sized : std::false_type {};
template <class T>
struct Sized<T, std::void_t<decltype(std::declval<const T&>().size())>> : std::true_type {};
template <class T> struct Array : std::bool_constant<TupleLike<T>::value && Sized<T>::value> {};
template <class T>
struct Tuple
    : std::bool_constant<TupleLike<T>::value && !Sized<T>::value && !Pair<T>::value> {};
template <class T> struct Unsupported : std::false_type {};
template <class T> struct Variant : std::false_type {};  // see the end: <variant> is optional

template <class T> void put(Writer& out, const T& value);
template <class T> void get(Reader& in, T& value);
template <class T> void put_variant(Writer& out, const T& value);
template <class T> void get_variant(Reader& in, T& value);

template <class T> void put_count(Writer& out, const T& items) {
    std::uint64_t n = static_cast<std::uint64_t>(std::distance(items.begin(), items.end()));
    out.raw(&n, sizeof n);
    for (const auto& item : items) put(out, item);
}

template <class T> void put(Writer& out, const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
        unsigned char byte = value ? 1 : 0;
        out.raw(&byte, 1);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        std::int64_t wide = value;
        out.raw(&wide, sizeof wide);
    } else if constexpr (std::is_integral_v<T>) {
        std::uint64_t wide = value;
        out.raw(&wide, sizeof wide);
    } else if constexpr (std::is_floating_point_v<T>) {
        double wide = static_cast<double>(value);
        out.raw(&wide, sizeof wide);
    } else if constexpr (std::is_same_v<T, std::string>) {
        std::uint64_t n = value.size();
        out.raw(&n, sizeof n);
        out.raw(value.data(), value.size());
    } else if constexpr (Sequence<T>::value || Keyed<T>::value || Array<T>::value) {
        put_count(out, value);
    } else if constexpr (Optional<T>::value) {
        put(out, value.has_value());
        if (value) put(out, *value);
    } else if constexpr (Pair<T>::value) {
        put(out, value.first);
        put(out, value.second);
    } else if constexpr (Tuple<T>::value) {
        unsigned char members = std::tuple_size_v<T>;  // an empty tuple still takes a byte
        out.raw(&members, 1);
        std::apply([&](const auto&... member) { (put(out, member), ...); }, value);
    } else if constexpr (Variant<T>::value) {
        put_variant(out, value);
    } else {
        static_assert(Unsupported<T>::value, "referee: this type cannot cross the boundary");
    }
}

template <class T> void get_integer(Reader& in, T& value) {
    if constexpr (std::is_signed_v<T>) {
        std::int64_t wide = 0;
        in.raw(&wide, sizeof wide);
        if (wide < std::numeric_limits<T>::min() || wide > std::numeric_limits<T>::max())
            throw Broken{"an integer out of its type's range"};
        value = static_cast<T>(wide);
    } else {
        std::uint64_t wide = 0;
        in.raw(&wide, sizeof wide);
        if (wide > std::numeric_limits<T>::max())
            throw Broken{"an integer out of its type's range"};
        value = static_cast<T>(wide);
    }
}

template <class T> void get_items(Reader& in, T& items) {
    std::uint64_t n = in.count();
    items.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
        if constexpr (Sequence<T>::value) {
            typename T::value_type item{};
            get(in, item);
            items.push_back(std::move(item));
        } else if constexpr (Mapped<T>::value) {  // entries of a const key and a value
            std::pair<typename T::key_type, typename T::mapped_type> entry{};
            get(in, entry);
            items.insert(std::move(entry));
        } else {
            typename T::value_type item{};
            get(in, item);
            items.insert(std::move(item));
        }
    }
}

template <class T> void get(Reader& in, T& value) {
    if constexpr (std::is_same_v<T, bool>) {
        unsigned char byte = 0;
        in.raw(&byte, 1);
        if (byte > 1) throw Broken{"a bool that is neither 0 nor 1"};
        value = byte == 1;
    } else if constexpr (std::is_integral_v<T>) {
        get_integer(in, value);
    } else if constexpr (std::is_floating_point_v<T>) {
        double wide = 0;
        in.raw(&wide, sizeof wide);
        value = static_cast<T>(wide);
    } else if constexpr (std::is_same_v<T, std::string>) {
        std::uint64_t n = in.count();
        value.assign(in.at, n);
        in.at += n;
    } else if constexpr (Sequence<T>::value || Keyed<T>::value) {
        get_items(in, value);
    } else if constexpr (Array<T>::value) {
        if (in.count() != value.size()) throw Broken{"an array of another size"};
        for (auto& item : value) get(in, item);
    } else if constexpr (Optional<T>::value) {
        bool present = false;
        get(in, present);
        value.reset();
        if (present) {
            typename T::value_type inner{};
            get(in, inner);
            value = std::move(inner);
        }
    } else if constexpr (Pair<T>::value) {
        get(in, value.first);
        get(in, value.second);
    } else if constexpr (Tuple<T>::value) {
        unsigned char members = 0;
        in.raw(&members, 1);
        if (members != std::tuple_size_v<T>) throw Broken{"a tuple of another size"};
        std::apply([&](auto&... member) { (get(in, member), ...); }, value);
    } else if constexpr (Variant<T>::value) {
        get_variant(in, value);
    } else {
        static_assert(Unsupported<T>::value, "referee: this type cannot cross the boundary");
    }
}

#ifdef _GLIBCXX_VARIANT
// std::variant, where the code before included <variant> (libstdc++'s guard): the index
// of the alternative it holds, then that alternative.
template <class... P> struct Variant<std::variant<P...>> : std::true_type {};

template <class T> void put_variant(Writer& out, const T& value) {
    if (value.valueless_by_exception()) throw Broken{"a variant without a value"};
    std::uint64_t index = value.index();
    out.raw(&index, sizeof index);
    std::visit([&](const auto& item) { put(out, item); }, value);
}

template <class T, std::size_t I = 0>
void get_alternative(Reader& in, T& value, std::uint64_t index) {
    if constexpr (I < std::variant_size_v<T>) {
        if (index != I) return get_alternative<T, I + 1>(in, value, index);
        std::variant_alternative_t<I, T> item{};
        get(in, item);
        value.template emplace<I>(std::move(item));
    } else {
        throw Broken{"a variant alternative out of range"};
    }
}

template <class T> void get_variant(Reader& in, T& value) {
    std::uint64_t index = 0;
    in.raw(&index, sizeof index);
    get_alternative(in, value, index);
}
#endif

// Set by the code after the program or the test when it included <iostream>.
inline void (*flush_streams)() = nullptr;

inline void flush_output() {
    if (flush_streams != nullptr) flush_streams();
    std::fflush(stdout);
}

inline int channel(const char* name) {
    const char* fd = std::getenv(name);
    return fd == nullptr ? -1 : std::atoi(fd);
}

inline bool send(const std::string& bytes) {
    std::uint32_t size = static_cast<std::uint32_t>(bytes.size());
    std::string message(reinterpret_cast<const char*>(&size), sizeof size);
    message += bytes;
    int fd = channel("REFEREE_CHANNEL_OUT");
    for (std::size_t sent = 0; sent < message.size();) {
        ssize_t n = ::write(fd, message.data() + sent, message.size() - sent);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

inline bool read_exactly(int fd, char* data, std::size_t size) {
    for (std::size_t got = 0; got < size;) {
        ssize_t n = ::read(fd, data + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += static_cast<std::size_t>(n);
    }
    return true;
}

// The next message into `bytes`; false at the end of the channel. Throws Broken for a
// message longer than MAX_MESSAGE or cut short.
inline bool receive(std::string& bytes) {
    int fd = channel("REFEREE_CHANNEL_IN");
    std::uint32_t size = 0;
    ssize_t first = 0;
    do first = ::read(fd, &size, 1);
    while (first < 0 && errno == EINTR);
    if (first <= 0) return false;
    if (!read_exactly(fd, reinterpret_cast<char*>(&size) + 1, sizeof size - 1))
        throw Broken{"a message cut short"};
    if (size > MAX_MESSAGE) throw Broken{"a message larger than 64 MiB"};
    bytes.resize(size);
    if (!read_exactly(fd, bytes.data(), size)) throw Broken{"a message cut short"};
    return true;
}

// A parameter taken by non-const reference: its value after the call goes back too.
template <class A> constexpr bool written_back =
    std::is_lvalue_reference_v<A> && !std::is_const_v<std::remove_reference_t<A>>;

template <class A> void put_back(Writer& out, const std::decay_t<A>& arg) {
    if constexpr (written_back<A>) put(out, arg);
}

template <class A> void get_back(Reader& in, std::remove_reference_t<A>& arg) {
    if constexpr (written_back<A>) get(in, arg);
}

// ---- the program's side ----------------------------------------------------------------

using Call = void (*)(Reader&, Writer&);

// Decode the arguments of `function`, call it, encode 0, its result and its out-parameters.
template <class R, class... A> void serve_call(R (*function)(A...), Reader& in, Writer& out) {
    std::tuple<std::decay_t<A>...> args;
    std::apply([&](auto&... arg) { (get(in, arg), ...); }, args);
    if (in.left() != 0) throw Broken{"a call with bytes left over"};
    unsigned char returned = 0;
    if constexpr (std::is_void_v<R>) {
        std::apply(function, args);
        out.raw(&returned, 1);
    } else {
        auto result = std::apply(function, args);
        out.raw(&returned, 1);
        put(out, result);
    }
    std::apply([&](auto&... arg) { (put_back<A>(out, arg), ...); }, args);
}

// Answer calls until the tests' side closes the channel; 0 then, 2 for a broken call.
inline int serve(const Call* calls, std::uint32_t count) {
    std::string bytes;
    try {
        while (receive(bytes)) {
            Reader in{bytes.data(), bytes.data() + bytes.size()};
            std::uint32_t index = 0;
            in.raw(&index, sizeof index);
            if (index >= count) throw Broken{"a call to no function"};
            Writer out;
            try {
                calls[index](in, out);
            } catch (const Broken&) {
                throw;
            } catch (const std::exception& error) {
                out.bytes.assign(1, '\1');
                put(out, std::string(error.what()).substr(0, 1000));
            } catch (...) {
                out.bytes.assign(1, '\1');
                put(out, std::string("an exception that is not a std::exception"));
            }
            flush_output();
            if (!send(out.bytes)) return 0;
        }
    } catch (const Broken& broken) {
        std::fprintf(stderr, "referee: %s\n", broken.why.c_str());
        return 2;
    }
    return 0;
}

// ---- the tests' side -------------------------------------------------------------------

inline std::string json_text(const std::string& text) {
    std::string quoted = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            quoted += '\\';
            quoted += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
            quoted += escaped;
        } else {
            quoted += static_cast<char>(c);
        }
    }
    return quoted + "\"";
}

// What the verdict line carries: the host's, per item, read from stdin before the test
// runs. A line the program made the test print (and then exit) never carries it.
inline char verdict_key[65];
inline std::size_t verdict_key_size = 0;

// The verdict's key: the first line of stdin (see `start`).
inline void read_verdict_key() {
    char c;
    while (verdict_key_size < sizeof verdict_key - 1 && ::read(0, &c, 1) == 1 && c != '\n')
        verdict_key[verdict_key_size++] = c;
}

// Whether the test has called the program: a verdict reached without a call is the
// reference's (it would be the same for every program). Read in a signal handler.
inline volatile std::sig_atomic_t called = 0;

inline std::string verdict_line(bool passed, const std::string& message, const char* flag) {
    std::string flags = flag == nullptr ? "" : std::string(", \"flags\": [\"") + flag + "\"]";
    std::string alone = called ? "" : ", \"called\": false";
    return std::string("\n@@referee-verdict@@ ") + std::string(verdict_key, verdict_key_size) +
           " {\"passed\": " + (passed ? "true" : "false") +
           ", \"message\": " + json_text(message.substr(0, 2000)) + flags + alone + "}\n";
}

inline void write_all(const std::string& text) {
    for (std::size_t done = 0; done < text.size();) {
        ssize_t n = ::write(1, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

// Say how the test ended and end the process (the test's own output first).
[[noreturn]] inline void conclude(bool passed, const std::string& message,
                                  const char* flag = nullptr) {
    flush_output();
    write_all(verdict_line(passed, message, flag));
    ::_exit(0);
}

inline bool started = false;

// Read the key and say that the test's own code starts (a process ending after this with
// no verdict ended in it), once: first thing in the tests' main, or at the first call,
// which a test's namespace-scope initialisation (`static int r = f(1);`) makes before it.
inline void start() {
    if (started) return;
    started = true;
    read_verdict_key();
    write_all("\n@@referee-verdict@@ " + std::string(verdict_key, verdict_key_size) +
              " {\"started\": true}\n");
}

template <class R, class... A>
R call(std::uint32_t index, const char* name, std::remove_reference_t<A>&... args) {
    start();
    called = 1;
    Writer request;
    request.raw(&index, sizeof index);
    (put(request, static_cast<const std::decay_t<A>&>(args)), ...);
    std::string reply;
    try {
        if (!send(request.bytes) || !receive(reply))
            conclude(false, std::string("the program ended during a call to ") + name);
    } catch (const Broken& broken) {
        conclude(false, std::string("the program's reply to ") + name + ": " + broken.why);
    }
    Reader in{reply.data(), reply.data() + reply.size()};
    std::string thrown;
    try {
        unsigned char kind = 2;
        in.raw(&kind, 1);
        if (kind == 1) {
            get(in, thrown);
        } else if (kind != 0) {
            throw Broken{"a reply of no known kind"};
        }
        if constexpr (!std::is_void_v<R>) {
            std::decay_t<R> result{};
            if (kind == 0) {
                get(in, result);
                (get_back<A>(in, args), ...);
                if (in.left() != 0) throw Broken{"a reply with bytes left over"};
                return result;
            }
        } else if (kind == 0) {
            (get_back<A>(in, args), ...);
            if (in.left() != 0) throw Broken{"a reply with bytes left over"};
            return;
        }
    } catch (const Broken& broken) {
        conclude(false, std::string("the program's reply to ") + name + ": " + broken.why);
    }
    throw std::runtime_error(thrown);  // the program's function threw this
}

inline void on_signal(int number) {
    // async-signal-safe: write and _exit only
    static const char mark[] = "\n@@referee-verdict@@ ";
    static const char rest[] =
        " {\"passed\": false, \"message\": \"the test crashed (a signal) on the program's "
        "values\"}\n";
    static const char alone[] =
        " {\"passed\": false, \"message\": \"the test crashed (a signal) before it called "
        "the program\", \"called\": false}\n";
    (void)number;
    ssize_t ignored = ::write(1, mark, sizeof mark - 1);
    ignored = ::write(1, verdict_key, verdict_key_size);
    if (called)
        ignored = ::write(1, rest, sizeof rest - 1);
    else
        ignored = ::write(1, alone, sizeof alone - 1);
    (void)ignored;
    ::_exit(0);
}

// The test called exit: it passes on status 0 (as a Python test's sys.exit(0) does).
inline void on_exit_called(int status, void*) {
    if (status == 0) conclude(true, "");
    conclude(false, "the test exited with status " + std::to_string(status));
}

// Run the test's main (renamed): the verdict is printed however it ends.
inline int run_test(int (*test_main)(int, char**), int argc, char** argv) {
    for (int number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(number, on_signal);
    // a program that died closed its end: a call's write then fails (EPIPE) and says so,
    // where SIGPIPE would end the test without a verdict
    std::signal(SIGPIPE, SIG_IGN);
    std::set_terminate([] { conclude(false, "the test ended by std::terminate"); });
    ::on_exit(on_exit_called, nullptr);
    int status = 0;
    try {
        status = test_main(argc, argv);
    } catch (const std::exception& error) {
        conclude(false, std::string("the test threw: ") + error.what());
    } catch (...) {
        conclude(false, "the test threw an exception");
    }
    if (status != 0) conclude(false, "the test's main returned " + std::to_string(status));
    conclude(true, "");
}

[[noreturn]] inline void assertion_failed(const char* what) {
    conclude(false, std::string("Assertion failed: ") + what);
}

// The program's function `name` stands in for a standard library function the test
// may call by the same name (its stub would win overload resolution).
[[noreturn]] inline void shadows_library(const char* name) {
    called = 1;  // the program's own declaration decided this verdict: its 0
    conclude(false,
             std::string("the program's ") + name +
                 " competes with the standard library's for the test's calls",
             "shadows_library");
}

}  // namespace referee_boundary
