/* gguf_writer.h: GGUF files built by hand in the C tests (little-endian
 * fields, GGUF type codes 4 = uint32, 6 = float32, 8 = string, 9 = array),
 * shared by test_rope_config.c and test_config_rules.c. */
#ifndef POSENC_TESTS_GGUF_WRITER_H
#define POSENC_TESTS_GGUF_WRITER_H

#include <stdint.h>
#include <string.h>

typedef struct {
    unsigned char buf[1 << 16];
    size_t n;
} gguf_buf;
static void put(gguf_buf *b, const void *p, size_t n) {
    memcpy(b->buf + b->n, p, n);
    b->n += n;
}
static void u32(gguf_buf *b, uint32_t v) {
    for (int i = 0; i < 4; i++) b->buf[b->n++] = (unsigned char)(v >> (8 * i));
}
static void u64(gguf_buf *b, uint64_t v) {
    for (int i = 0; i < 8; i++) b->buf[b->n++] = (unsigned char)(v >> (8 * i));
}
static void str(gguf_buf *b, const char *s) {
    u64(b, strlen(s));
    put(b, s, strlen(s));
}
static void kv_str(gguf_buf *b, const char *k, const char *v) {
    str(b, k);
    u32(b, 8);
    str(b, v);
}
static void kv_u32(gguf_buf *b, const char *k, uint32_t v) {
    str(b, k);
    u32(b, 4);
    u32(b, v);
}
static void kv_f32(gguf_buf *b, const char *k, float v) {
    uint32_t w;
    memcpy(&w, &v, 4);
    str(b, k);
    u32(b, 6);
    u32(b, w);
}
static void gguf_header(gguf_buf *b, uint32_t version, uint64_t tensors, uint64_t kvs) {
    b->n = 0;
    put(b, "GGUF", 4);
    u32(b, version);
    u64(b, tensors);
    u64(b, kvs);
}

#endif
