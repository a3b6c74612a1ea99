/* The boundary between a C program and its assert test (`verifiers.code.boundary.c`).
 *
 * The program's functions run in one sandbox, served by `referee_serve`; the test runs in
 * a second sandbox, where each of those functions is a stub (generated from the
 * program's signature) that sends its arguments over the channel (REFEREE_CHANNEL_IN /
 * REFEREE_CHANNEL_OUT name the fds) and returns what comes back: the test's expected
 * values never exist in the program's process.
 *
 * The wire is the C++ boundary's (`boundary.hpp`): a message is a 32-bit length, then its
 * bytes; a call is the function's index and its arguments; a reply is 0, the result, then
 * the strings the function may have written to (its `char *` parameters). bool is one
 * byte; integers 64 bits (checked against the receiving type's range by the generated
 * code); floating point the bits of a double. A string argument is a presence byte (NULL
 * or not), the number of characters its buffer holds before a NUL (64 bits), then a
 * 64-bit count and its bytes; one written back a presence byte, a count and its bytes. A
 * returned string is 0 (NULL), 1 and a count and bytes, or 2, a 32-bit parameter index
 * and a 64-bit offset: a pointer into that string argument (`reverse(s)` returning `s`),
 * which the test's side maps to the test's own buffer.
 * Everything read is checked against what is left of its message: a program that writes
 * anything else to the channel fails the test, and can neither overrun nor starve the
 * test's side.
 *
 * This header includes no header: it declares the few C library functions it uses under
 * names of its own (assembler labels), so none of their names is declared in the
 * program's code or the test's, and neither side's includes are changed by it.
 */
#ifndef REFEREE_BOUNDARY_H
#define REFEREE_BOUNDARY_H
/* Every program is compiled with this header: optimised for size, its functions cost
 * ~17 ms less of a ~70 ms build than at the program's -O2 (they wait on a channel). */
#pragma GCC push_options
#pragma GCC optimize("Os")

typedef __SIZE_TYPE__ referee_size;

extern long referee_libc_read(int, void *, referee_size) __asm__("read");
extern long referee_libc_write(int, const void *, referee_size) __asm__("write");
extern void referee_libc_exit(int) __asm__("_exit") __attribute__((noreturn));
extern void *referee_libc_realloc(void *, referee_size) __asm__("realloc");
extern void referee_libc_free(void *) __asm__("free");
extern char *referee_libc_getenv(const char *) __asm__("getenv");
extern int referee_libc_fflush(void *) __asm__("fflush");
extern int *referee_libc_errno(void) __asm__("__errno_location");
typedef void (*referee_handler)(int);
extern referee_handler referee_libc_signal(int, referee_handler) __asm__("signal");
extern int referee_libc_on_exit(void (*)(int, void *), void *) __asm__("on_exit");

#define REFEREE_EINTR 4
#define REFEREE_MAX_MESSAGE (64u << 20)
#define REFEREE_UNUSED __attribute__((unused))

#if defined(__has_builtin)
#if __has_builtin(__builtin_dynamic_object_size)
#define REFEREE_OBJECT_SIZE(p) __builtin_dynamic_object_size(p, 1)
#endif
#endif
#ifndef REFEREE_OBJECT_SIZE
#define REFEREE_OBJECT_SIZE(p) __builtin_object_size(p, 1)
#endif

typedef struct {
    char *bytes;
    referee_size size, capacity;
} referee_writer;

typedef struct {
    const char *at, *end;
} referee_reader;

/* Whose side this is (the test's, once it runs), and the function being called. */
static int referee_testing;
static const char *referee_calling = "";
/* Whether the test has called the program: a verdict reached without a call is the
 * reference's (it would be the same for every program). Read in a signal handler. */
static volatile int referee_called;
/* What the verdict line carries: the host's, per item, read from stdin before the test
 * runs. A line the program made the test print (and then exit) never carries it. */
#define REFEREE_MAX_KEY 64
static char referee_key[REFEREE_MAX_KEY + 1];
static referee_size referee_key_size;

static void referee_conclude(int passed, const char *const *parts, int count)
    __attribute__((noreturn));

static REFEREE_UNUSED void referee_write_all(int fd, const char *data, referee_size size) {
    while (size > 0) {
        long n = referee_libc_write(fd, data, size);
        if (n < 0 && *referee_libc_errno() == REFEREE_EINTR) continue;
        if (n <= 0) return;
        data += n;
        size -= (referee_size)n;
    }
}

static referee_size referee_length(const char *text) {
    referee_size n = 0;
    while (text[n] != '\0') ++n;
    return n;
}

/* The channel broke or a message was malformed: the program's side stops (exit 2), the
 * test's fails, naming the call. */
static REFEREE_UNUSED void referee_broken(const char *why) __attribute__((noreturn));
static void referee_broken(const char *why) {
    if (referee_testing) {
        const char *parts[] = {"the program's reply to ", referee_calling, ": ", why};
        referee_conclude(0, parts, 4);
    }
    referee_write_all(2, "referee: ", 9);
    referee_write_all(2, why, referee_length(why));
    referee_write_all(2, "\n", 1);
    referee_libc_exit(2);
}

/* Room for `size` more bytes in `out`. */
static void referee_reserve(referee_writer *out, referee_size size) {
    if (out->capacity - out->size < size) {
        referee_size capacity = out->capacity * 2 + size + 64;
        char *grown = (char *)referee_libc_realloc(out->bytes, capacity);
        if (grown == 0) referee_broken("out of memory for a message");
        out->bytes = grown;
        out->capacity = capacity;
    }
}

static void referee_raw(referee_writer *out, const void *data, referee_size size) {
    referee_reserve(out, size);
    for (referee_size i = 0; i < size; ++i) out->bytes[out->size + i] = ((const char *)data)[i];
    out->size += size;
}

static void referee_take(referee_reader *in, void *data, referee_size size) {
    if ((referee_size)(in->end - in->at) < size) referee_broken("a message ends too soon");
    for (referee_size i = 0; i < size; ++i) ((char *)data)[i] = in->at[i];
    in->at += size;
}

static REFEREE_UNUSED void referee_put_bool(referee_writer *out, int value) {
    unsigned char byte = value ? 1 : 0;
    referee_raw(out, &byte, 1);
}

static REFEREE_UNUSED void referee_put_i64(referee_writer *out, long long value) {
    referee_raw(out, &value, sizeof value);
}

static REFEREE_UNUSED void referee_put_u64(referee_writer *out, unsigned long long value) {
    referee_raw(out, &value, sizeof value);
}

static REFEREE_UNUSED void referee_put_f64(referee_writer *out, double value) {
    referee_raw(out, &value, sizeof value);
}

static void referee_put_bytes(referee_writer *out, const char *text, referee_size size) {
    unsigned long long n = size;
    referee_raw(out, &n, sizeof n);
    referee_raw(out, text, size);
}

/* A string argument: NULL, or how many characters its buffer holds before a NUL
 * (`limit`, see `referee_limit`) and the characters before its NUL, at most that many. */
static REFEREE_UNUSED void referee_put_string(referee_writer *out, const char *text,
                                              referee_size limit) {
    referee_put_bool(out, text != 0);
    if (text == 0) return;
    unsigned long long wide = limit;
    referee_raw(out, &wide, sizeof wide);
    referee_size size = 0;
    while (size < limit && text[size] != '\0') ++size;
    referee_put_bytes(out, text, size);
}

static REFEREE_UNUSED int referee_get_bool(referee_reader *in) {
    unsigned char byte = 2;
    referee_take(in, &byte, 1);
    if (byte > 1) referee_broken("a bool that is neither 0 nor 1");
    return byte;
}

static REFEREE_UNUSED long long referee_get_i64(referee_reader *in) {
    long long value = 0;
    referee_take(in, &value, sizeof value);
    return value;
}

static REFEREE_UNUSED unsigned long long referee_get_u64(referee_reader *in) {
    unsigned long long value = 0;
    referee_take(in, &value, sizeof value);
    return value;
}

static REFEREE_UNUSED double referee_get_f64(referee_reader *in) {
    double value = 0;
    referee_take(in, &value, sizeof value);
    return value;
}

/* A count, then that many bytes, as a new NUL-terminated string; `*size` its count. */
static char *referee_get_bytes(referee_reader *in, referee_size *size) {
    unsigned long long n = referee_get_u64(in);
    if (n > (unsigned long long)(in->end - in->at)) referee_broken("a count larger than its message");
    char *text = (char *)referee_libc_realloc(0, (referee_size)n + 1);
    if (text == 0) referee_broken("out of memory for a string");
    referee_take(in, text, (referee_size)n);
    text[n] = '\0';
    *size = (referee_size)n;
    return text;
}

/* A string argument: NULL, or a new buffer as large as the test's (`*limit` characters
 * and a NUL, zeros after the string), which the function may write to. */
static REFEREE_UNUSED char *referee_get_string(referee_reader *in, referee_size *limit) {
    *limit = 0;
    if (!referee_get_bool(in)) return 0;
    unsigned long long wide = referee_get_u64(in);
    if (wide > REFEREE_MAX_MESSAGE) referee_broken("a string's buffer larger than 64 MiB");
    referee_size size = 0;
    char *text = referee_get_bytes(in, &size);
    if (size > wide) referee_broken("a string longer than its buffer");
    text = (char *)referee_libc_realloc(text, (referee_size)wide + 1);
    if (text == 0) referee_broken("out of memory for a string");
    for (referee_size i = size; i <= wide; ++i) text[i] = '\0';
    *limit = (referee_size)wide;
    return text;
}

/* A count of items, each at least one byte: never more than what is left. */
static REFEREE_UNUSED referee_size referee_get_count(referee_reader *in) {
    unsigned long long n = referee_get_u64(in);
    if (n > (unsigned long long)(in->end - in->at)) referee_broken("a count larger than its message");
    return (referee_size)n;
}

/* Room for `count` items of `size` bytes, zeroed (at least one byte). */
static REFEREE_UNUSED void *referee_array(referee_size count, referee_size size) {
    referee_size bytes = count * size;
    if (size != 0 && bytes / size != count) referee_broken("an array too large");
    char *items = (char *)referee_libc_realloc(0, bytes + 1);
    if (items == 0) referee_broken("out of memory for an array");
    for (referee_size i = 0; i <= bytes; ++i) items[i] = 0;
    return items;
}

/* The end of a message: `what` when bytes are left over. */
static REFEREE_UNUSED void referee_done(referee_reader *in, const char *what) {
    if (in->at != in->end) referee_broken(what);
}

static int referee_channel(const char *name) {
    const char *fd = referee_libc_getenv(name);
    int n = 0;
    while (fd != 0 && *fd >= '0' && *fd <= '9' && n < 1 << 20) n = n * 10 + (*fd++ - '0');
    return fd == 0 ? -1 : n;
}

static int referee_send(const referee_writer *message) {
    unsigned int size = (unsigned int)message->size;
    int fd = referee_channel("REFEREE_CHANNEL_OUT");
    const char *parts[2] = {(const char *)&size, message->bytes};
    referee_size sizes[2] = {sizeof size, message->size};
    for (int part = 0; part < 2; ++part) {
        for (referee_size sent = 0; sent < sizes[part];) {
            long n = referee_libc_write(fd, parts[part] + sent, sizes[part] - sent);
            if (n < 0 && *referee_libc_errno() == REFEREE_EINTR) continue;
            if (n <= 0) return 0;
            sent += (referee_size)n;
        }
    }
    return 1;
}

static int referee_read_exactly(int fd, char *data, referee_size size) {
    for (referee_size got = 0; got < size;) {
        long n = referee_libc_read(fd, data + got, size - got);
        if (n < 0 && *referee_libc_errno() == REFEREE_EINTR) continue;
        if (n <= 0) return 0;
        got += (referee_size)n;
    }
    return 1;
}

/* The next message into `buffer` (grown as needed); 0 at the end of the channel. */
static int referee_receive(referee_writer *buffer, referee_reader *in) {
    int fd = referee_channel("REFEREE_CHANNEL_IN");
    unsigned int size = 0;
    long first = 0;
    do first = referee_libc_read(fd, &size, 1);
    while (first < 0 && *referee_libc_errno() == REFEREE_EINTR);
    if (first <= 0) return 0;
    if (!referee_read_exactly(fd, (char *)&size + 1, sizeof size - 1))
        referee_broken("a message cut short");
    if (size > REFEREE_MAX_MESSAGE) referee_broken("a message larger than 64 MiB");
    buffer->size = 0;
    referee_reserve(buffer, size);
    if (!referee_read_exactly(fd, buffer->bytes, size)) referee_broken("a message cut short");
    in->at = buffer->bytes;
    in->end = buffer->bytes + size;
    return 1;
}

/* ---- the program's side ------------------------------------------------------------ */

typedef void (*referee_serving)(referee_reader *, referee_writer *);

/* The reply's kind: the function returned (what it returned follows). */
static REFEREE_UNUSED void referee_returned(referee_writer *out) {
    unsigned char kind = 0;
    referee_raw(out, &kind, 1);
}

/* A returned string: NULL, a pointer into the string argument `index` (`starts` and
 * `limits` are the arguments as the function got them), or a string of its own. */
static REFEREE_UNUSED void referee_put_result(referee_writer *out, const char *result,
                                              char *const *starts, const referee_size *limits,
                                              unsigned int count) {
    unsigned char kind = 0;
    if (result == 0) {
        referee_raw(out, &kind, 1);
        return;
    }
    for (unsigned int index = 0; index < count; ++index) {
        if (starts[index] != 0 && result >= starts[index] &&
            result <= starts[index] + limits[index]) {
            unsigned long long offset = (unsigned long long)(result - starts[index]);
            kind = 2;
            referee_raw(out, &kind, 1);
            referee_raw(out, &index, sizeof index);
            referee_raw(out, &offset, sizeof offset);
            return;
        }
    }
    kind = 1;
    referee_raw(out, &kind, 1);
    referee_put_bytes(out, result, referee_length(result));
}

/* A `char *` argument after the call: its string, or its buffer and one character more
 * when the function wrote past the buffer's limit (the test's side refuses that). */
static REFEREE_UNUSED void referee_put_back(referee_writer *out, const char *text,
                                            referee_size limit) {
    referee_put_bool(out, text != 0);
    if (text == 0) return;
    referee_size held = 0;
    while (held <= limit && text[held] != '\0') ++held;
    referee_put_bytes(out, text, held);
}

/* Answer calls until the test's side closes the channel: 0 then. */
static REFEREE_UNUSED int referee_serve(const referee_serving *calls, unsigned int count) {
    referee_writer buffer = {0, 0, 0}, out = {0, 0, 0};
    referee_reader in;
    while (referee_receive(&buffer, &in)) {
        unsigned int index = 0;
        referee_take(&in, &index, sizeof index);
        if (index >= count) referee_broken("a call to no function");
        out.size = 0;
        calls[index](&in, &out);
        referee_libc_fflush(0);
        if (!referee_send(&out)) return 0;
    }
    return 0;
}

/* ---- the test's side ---------------------------------------------------------------- */

typedef struct {
    referee_writer out, reply;
    referee_reader in;
} referee_call;

static REFEREE_UNUSED void referee_begin(referee_call *call, unsigned int index,
                                         const char *name) {
    referee_writer empty = {0, 0, 0};
    call->out = empty;
    call->reply = empty;
    referee_calling = name;
    referee_called = 1;
    referee_raw(&call->out, &index, sizeof index);
}

/* Send the call, wait for the reply, read its kind (0: returned). */
static REFEREE_UNUSED void referee_exchange(referee_call *call) {
    if (!referee_send(&call->out) || !referee_receive(&call->reply, &call->in))
        referee_conclude(0, (const char *[]){"the program ended during a call to ", referee_calling}, 2);
    unsigned char kind = 3;
    referee_take(&call->in, &kind, 1);
    if (kind != 0) referee_broken("a reply of no known kind");
}

/* How many characters the test's buffer `text` holds before a NUL: from its object's
 * size where the compiler knows it (`known`: the stub is inlined at the call, so `char
 * s[32]` holds 31), else its string's length. Only that much of it is ever read: an
 * unterminated buffer is not read past its end into the test's other data. */
static REFEREE_UNUSED referee_size referee_limit(const char *text, referee_size known) {
    if (text == 0) return 0;
    if (known != (referee_size)-1 && known > 0) return known - 1;
    return referee_length(text);
}

/* A returned string (see `referee_put_result`); `args` are the call's string arguments
 * and `limits` theirs (`referee_limit`), NULL and 0 for the other parameters. */
static REFEREE_UNUSED char *referee_get_result(referee_call *call, char *const *args,
                                               const referee_size *limits, unsigned int count) {
    unsigned char kind = 3;
    referee_take(&call->in, &kind, 1);
    if (kind == 0) return 0;
    if (kind == 1) {
        referee_size size = 0;
        return referee_get_bytes(&call->in, &size);
    }
    if (kind != 2) referee_broken("a returned string of no known kind");
    unsigned int index = count;
    unsigned long long offset = 0;
    referee_take(&call->in, &index, sizeof index);
    referee_take(&call->in, &offset, sizeof offset);
    if (index >= count || args[index] == 0) referee_broken("a string returned from no argument");
    if (offset > limits[index]) referee_broken("a string returned past its argument");
    return args[index] + offset;
}

/* What the program's function left in a `char *` argument, copied into the test's own
 * buffer: never more than its limit (`referee_limit`) and a NUL. */
static REFEREE_UNUSED void referee_get_back(referee_call *call, char *arg, referee_size limit) {
    if (!referee_get_bool(&call->in)) {
        if (arg != 0) referee_broken("a string argument written back as NULL");
        return;
    }
    referee_size size = 0;
    char *text = referee_get_bytes(&call->in, &size);
    if (arg == 0) referee_broken("a NULL argument written back");
    if (size > limit) referee_broken("a string written back longer than its buffer");
    /* from the first character that changed: a string the function left alone is never
     * written, so a literal the test passed as `char *` stays as it was (writing to it
     * would end the test on a signal) */
    referee_size i = 0;
    while (i <= size && arg[i] == text[i]) ++i;
    for (; i <= size; ++i) arg[i] = text[i];
    referee_libc_free(text);
}

/* Whether two strings (either NULL) are the same. */
static REFEREE_UNUSED int referee_same(const char *a, const char *b) {
    if (a == 0 || b == 0) return a == b;
    while (*a != '\0' && *a == *b) ++a, ++b;
    return *a == *b;
}

static REFEREE_UNUSED void referee_finish(referee_call *call) {
    referee_done(&call->in, "a reply with bytes left over");
    referee_libc_free(call->out.bytes);
    referee_libc_free(call->reply.bytes);
    referee_calling = "";
}

static void referee_put_json(referee_writer *out, const char *text, referee_size limit) {
    static const char hex[] = "0123456789abcdef";
    referee_raw(out, "\"", 1);
    for (referee_size i = 0; text[i] != '\0' && i < limit; ++i) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') {
            referee_raw(out, "\\", 1);
            referee_raw(out, &text[i], 1);
        } else if (c < 0x20 || c == 0x7f) {
            char escaped[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            referee_raw(out, escaped, sizeof escaped);
        } else {
            referee_raw(out, &text[i], 1);
        }
    }
    referee_raw(out, "\"", 1);
}

/* The start of a verdict line: the mark and the key. */
static void referee_mark(referee_writer *line) {
    static const char mark[] = "\n@@referee-verdict@@ ";
    referee_raw(line, mark, sizeof mark - 1);
    referee_raw(line, referee_key, referee_key_size);
}

/* The test itself cannot be run as given (the reference's fault, never the program's
 * 0): say so and end the process. */
static REFEREE_UNUSED void referee_harness_error(const char *what) __attribute__((noreturn));
static void referee_harness_error(const char *what) {
    static const char start[] = " {\"passed\": false, \"harness_error\": ";
    referee_writer line = {0, 0, 0};
    referee_libc_fflush(0);
    referee_mark(&line);
    referee_raw(&line, start, sizeof start - 1);
    referee_put_json(&line, what, 2000);
    referee_raw(&line, "}\n", 2);
    referee_write_all(1, line.bytes, line.size);
    referee_libc_exit(0);
}

/* How many items of `size` bytes the test's array argument holds: its object's size
 * where the compiler knows it (`known`: the stub is inlined at the call, so `int a[5]`
 * holds 5 and `&n` one). Only so much of it is ever read or written. One the compiler
 * cannot size (a pointer from elsewhere) cannot be passed: the test's fault. */
static REFEREE_UNUSED referee_size referee_items(referee_size known, referee_size size,
                                                const char *name) {
    if (known == (referee_size)-1) {
        referee_writer what = {0, 0, 0};
        static const char more[] = ": an array argument whose size the compiler does not "
                                   "know at the call (pass an array, or a pointer into one)";
        referee_raw(&what, "the call to ", 12);
        referee_raw(&what, name, referee_length(name));
        referee_raw(&what, more, sizeof more);
        referee_harness_error(what.bytes);
    }
    return known / size;
}

/* Say how the test ended (its own output first) and end the process; the message is
 * `parts` one after the other. */
static void referee_conclude(int passed, const char *const *parts, int count) {
    static const char start[] = " {\"passed\": ";
    static const char middle[] = ", \"message\": ";
    static const char uncalled[] = ", \"called\": false";
    referee_writer line = {0, 0, 0}, text = {0, 0, 0};
    referee_libc_fflush(0);
    for (int i = 0; i < count; ++i) referee_raw(&text, parts[i], referee_length(parts[i]));
    referee_raw(&text, "", 1);
    referee_mark(&line);
    referee_raw(&line, start, sizeof start - 1);
    referee_raw(&line, passed ? "true" : "false", passed ? 4 : 5);
    referee_raw(&line, middle, sizeof middle - 1);
    referee_put_json(&line, text.bytes, 2000);
    if (!referee_called) referee_raw(&line, uncalled, sizeof uncalled - 1);
    referee_raw(&line, "}\n", 2);
    referee_write_all(1, line.bytes, line.size);
    referee_libc_exit(0);
}

static void referee_on_signal(int number) {
    /* async-signal-safe: write and _exit only */
    static const char mark[] = "\n@@referee-verdict@@ ";
    static const char rest[] =
        " {\"passed\": false, \"message\": \"the test crashed (a signal) on the program's "
        "values\"}\n";
    static const char alone[] =
        " {\"passed\": false, \"message\": \"the test crashed (a signal) before it called "
        "the program\", \"called\": false}\n";
    (void)number;
    referee_write_all(1, mark, sizeof mark - 1);
    referee_write_all(1, referee_key, referee_key_size);
    if (referee_called)
        referee_write_all(1, rest, sizeof rest - 1);
    else
        referee_write_all(1, alone, sizeof alone - 1);
    referee_libc_exit(0);
}

/* The test called exit: it passes on status 0 (as a Python test's sys.exit(0) does). */
static void referee_on_exit(int status, void *unused) {
    char digits[12];
    int at = 12, negative = status < 0;
    unsigned magnitude = negative ? 0u - (unsigned)status : (unsigned)status;
    (void)unused;
    if (status == 0) referee_conclude(1, (const char *[]){""}, 1);
    digits[--at] = '\0';
    do digits[--at] = (char)('0' + magnitude % 10); while ((magnitude /= 10) != 0);
    if (negative) digits[--at] = '-';
    referee_conclude(0, (const char *[]){"the test exited with status ", digits + at}, 2);
}

/* The verdict's key: the first line of stdin (the rest is the test's). */
static void referee_read_key(void) {
    char c;
    while (referee_key_size < REFEREE_MAX_KEY && referee_libc_read(0, &c, 1) == 1 && c != '\n')
        referee_key[referee_key_size++] = c;
}

/* Say that the test's own code starts: a process ending after this with no verdict
 * ended in the test, not in the harness. */
static void referee_started(void) {
    static const char rest[] = " {\"started\": true}\n";
    referee_writer line = {0, 0, 0};
    referee_mark(&line);
    referee_raw(&line, rest, sizeof rest - 1);
    referee_write_all(1, line.bytes, line.size);
}

static REFEREE_UNUSED void referee_assertion_failed(const char *what) __attribute__((noreturn));
static void referee_assertion_failed(const char *what) {
    referee_conclude(0, (const char *[]){"Assertion failed: ", what}, 2);
}

/* Run the test's main (renamed): the verdict is printed however it ends. */
static REFEREE_UNUSED int referee_run_test(int (*test_main)(int, char **), int argc,
                                           char **argv) {
    static const int fatal[] = {11, 7, 8, 4, 6}; /* SEGV, BUS, FPE, ILL, ABRT */
    for (int i = 0; i < 5; ++i) referee_libc_signal(fatal[i], referee_on_signal);
    /* a program that died closed its end: a call's write then fails (EPIPE) and says so,
     * where SIGPIPE would end the test without a verdict */
    referee_libc_signal(13, (referee_handler)1); /* SIGPIPE, SIG_IGN */
    referee_read_key();
    referee_libc_on_exit(referee_on_exit, 0);
    referee_testing = 1;
    referee_started();
    int status = test_main(argc, argv);
    if (status != 0) referee_conclude(0, (const char *[]){"the test's main returned non-zero"}, 1);
    referee_conclude(1, (const char *[]){""}, 1);
}

#pragma GCC pop_options
#endif
