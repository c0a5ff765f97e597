/* fuzz_data.h: carve typed parameters from a fuzz input, zstd's
 * fuzz_data_producer style. Parameters are taken from the TAIL of the input so
 * that the head stays available as a byte payload (a file image, a list of
 * positions) and small mutations of the payload do not shift the parameters.
 * When the input runs out every getter returns its minimum, so any input,
 * even an empty one, is a valid call. Header-only, no global state. */
#ifndef POSENC_FUZZ_DATA_H
#define POSENC_FUZZ_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    size_t size; /* bytes not yet consumed (the head of data) */
} fuzz_data;

static inline fuzz_data fuzz_data_make(const uint8_t *data, size_t size) {
    fuzz_data f = {data, size};
    return f;
}

/* n bytes from the tail as a little-endian integer (missing bytes are 0). */
static inline uint64_t fuzz_bits(fuzz_data *f, int nbytes) {
    uint64_t v = 0;
    for (int i = 0; i < nbytes && f->size > 0; i++) {
        v |= (uint64_t)f->data[f->size - 1] << (8 * i);
        f->size--;
    }
    return v;
}

/* Uniform-ish value in [min, max] (inclusive), using only the bytes it needs. */
static inline uint64_t fuzz_range_u64(fuzz_data *f, uint64_t min, uint64_t max) {
    uint64_t span = max - min;
    if (span == 0) return min;
    int nbytes = 0;
    for (uint64_t s = span; s; s >>= 8) nbytes++;
    uint64_t v = fuzz_bits(f, nbytes);
    return span == UINT64_MAX ? v : min + v % (span + 1);
}

static inline int64_t fuzz_range_i64(fuzz_data *f, int64_t min, int64_t max) {
    uint64_t span = (uint64_t)max - (uint64_t)min;
    return (int64_t)((uint64_t)min + fuzz_range_u64(f, 0, span));
}

static inline int fuzz_bool(fuzz_data *f) { return (int)(fuzz_bits(f, 1) & 1); }

/* A double that is usually ordinary but can be any bit pattern (NaN, inf,
 * subnormal, negative zero): selector byte first, then the value. */
static inline double fuzz_double(fuzz_data *f, double typical_max) {
    unsigned sel = (unsigned)fuzz_bits(f, 1);
    if (sel < 128) { /* a value in [0, typical_max] in steps of 1/16 */
        return (double)fuzz_range_u64(f, 0, (uint64_t)(typical_max * 16.0)) / 16.0;
    }
    if (sel < 160) return -(double)fuzz_range_u64(f, 0, 1000);
    uint64_t bits = fuzz_bits(f, 8); /* raw IEEE bits */
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* An int that is usually small but sometimes an edge value of its type. */
static inline int64_t fuzz_int_edgy(fuzz_data *f, int64_t small_min, int64_t small_max) {
    static const int64_t edges[] = {0, -1, 1, INT32_MAX, INT32_MIN, (int64_t)1 << 30,
                                    ((int64_t)1 << 30) + 1, INT64_MAX, INT64_MIN,
                                    ((int64_t)1 << 53), ((int64_t)1 << 53) - 1, ((int64_t)1 << 24)};
    unsigned sel = (unsigned)fuzz_bits(f, 1);
    if (sel < 224) return fuzz_range_i64(f, small_min, small_max);
    return edges[sel % (sizeof edges / sizeof edges[0])];
}

#endif
