/* fuzz_dtype.c: the dtype conversions (f32 <-> f16, f32 <-> bf16, the
 * round_to helpers, posenc_array_to_f64) on arbitrary bit patterns.
 * Promises checked: conversions are correctly rounded (nearest, ties to even:
 * neither neighbour of the result in the target format is closer to the
 * input), overflow goes to inf, NaN stays NaN, sign is symmetric, narrowing a
 * widened value gives the same bits back, rounding is idempotent, and
 * posenc_array_to_f64 agrees element by element with the scalar converters. */
#include "fuzz_common.h"
#include "fuzz_data.h"

#include <math.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

typedef struct {
    const char *name;
    uint16_t (*narrow)(float);
    float (*widen)(uint16_t);
    float (*round_to)(float);
    double max_finite; /* largest finite value of the format */
    double overflow;   /* |x| >= this rounds to inf (max + half an ulp) */
} half_format;

/* x >= 0 finite: the result must be the nearest representable, ties to even. */
static void check_rounding(const half_format *fmt, float x) {
    uint16_t h = fmt->narrow(x);
    float y = fmt->widen(h);
    if ((double)x >= fmt->overflow) {
        FUZZ_REQUIRE(isinf(y) && y > 0, "%s(%a) = %a, want inf", fmt->name, (double)x, (double)y);
        return;
    }
    FUZZ_REQUIRE(isfinite(y) && y >= 0 && !signbit(y), "%s(%a) = %a", fmt->name, (double)x, (double)y);
    FUZZ_REQUIRE(fmt->narrow(y) == h, "%s: narrow(widen(h)) != h for h=0x%04x", fmt->name, h);
    double d = fabs((double)x - (double)y); /* exact: both are floats within 2^40 of each other's scale */
    if (h > 0) {
        double below = (double)fmt->widen((uint16_t)(h - 1));
        double db = fabs((double)x - below);
        FUZZ_REQUIRE(d < db || (d == db && (h & 1) == 0), "%s(%a) = %a but %a is nearer/even", fmt->name,
                     (double)x, (double)y, below);
    }
    if ((double)y < fmt->max_finite) {
        double above = (double)fmt->widen((uint16_t)(h + 1));
        double da = fabs(above - (double)x);
        FUZZ_REQUIRE(d < da || (d == da && (h & 1) == 0), "%s(%a) = %a but %a is nearer/even", fmt->name,
                     (double)x, (double)y, above);
    }
    float r = fmt->round_to(x);
    FUZZ_REQUIRE(r == y && fmt->round_to(r) == r, "%s round_to not idempotent at %a", fmt->name, (double)x);
}

static void check_format(const half_format *fmt, float x, uint16_t bits) {
    if (isnan(x)) {
        FUZZ_REQUIRE(isnan(fmt->widen(fmt->narrow(x))), "%s: NaN lost", fmt->name);
        FUZZ_REQUIRE(isnan(fmt->round_to(x)), "%s: round_to lost NaN", fmt->name);
    } else if (isinf(x)) {
        FUZZ_REQUIRE(fmt->widen(fmt->narrow(x)) == x, "%s: inf not kept", fmt->name);
    } else {
        check_rounding(fmt, fabsf(x));
        FUZZ_REQUIRE((fmt->narrow(-x) ^ fmt->narrow(x)) == 0x8000u, "%s: sign not symmetric at %a", fmt->name,
                     (double)x);
    }
    /* every 16-bit pattern widens exactly and narrows back to itself (NaN stays NaN) */
    float w = fmt->widen(bits);
    if (isnan(w)) FUZZ_REQUIRE(isnan(fmt->widen(fmt->narrow(w))), "%s: NaN 0x%04x lost", fmt->name, bits);
    else FUZZ_REQUIRE(fmt->narrow(w) == bits, "%s: 0x%04x -> %a -> 0x%04x", fmt->name, bits, (double)w,
                      fmt->narrow(w));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const half_format f16 = {"f16", posenc_f32_to_f16, posenc_f16_to_f32, posenc_round_to_f16, 65504.0,
                                    65520.0};
    /* bf16: max 0x7f7f = (2 - 2^-7) * 2^127; overflow at (2 - 2^-8) * 2^127 */
    static const half_format bf16 = {"bf16", posenc_f32_to_bf16, posenc_bf16_to_f32, posenc_round_to_bf16,
                                     0x1.fep127, 0x1.ffp127};
    fuzz_data f = fuzz_data_make(data, size);
    for (int i = 0; i < 16 && f.size >= 6; i++) {
        float x = bits_to_float((uint32_t)fuzz_bits(&f, 4));
        uint16_t b = (uint16_t)fuzz_bits(&f, 2);
        check_format(&f16, x, b);
        check_format(&bf16, x, b);
    }
    /* an array of any dtype over the remaining bytes converts element by element */
    posenc_dtype dtype = (posenc_dtype)fuzz_range_u64(&f, 0, 7);
    size_t item = posenc_dtype_size(dtype);
    size_t shape[1] = {f.size / item};
    posenc_array a, w;
    posenc_error err;
    if (posenc_array_create(&a, dtype, 1, shape, 1 << 16, &err) != POSENC_OK) return 0;
    memcpy(a.data, f.data, a.count * item);
    posenc_status st = posenc_array_to_f64(&a, &w, &err);
    FUZZ_REQUIRE(st == POSENC_OK && w.count == a.count, "array_to_f64: %s", err.message);
    for (size_t i = 0; i < a.count; i++) {
        const unsigned char *p = (const unsigned char *)a.data + i * item;
        double want = 0;
        uint16_t u16;
        float f32;
        switch (dtype) {
        case POSENC_DTYPE_F32: memcpy(&f32, p, 4); want = f32; break;
        case POSENC_DTYPE_F64: memcpy(&want, p, 8); break;
        case POSENC_DTYPE_F16: memcpy(&u16, p, 2); want = posenc_f16_to_f32(u16); break;
        case POSENC_DTYPE_BF16: memcpy(&u16, p, 2); want = posenc_bf16_to_f32(u16); break;
        case POSENC_DTYPE_I32: { int32_t v; memcpy(&v, p, 4); want = v; break; }
        case POSENC_DTYPE_I64: { int64_t v; memcpy(&v, p, 8); want = (double)v; break; }
        case POSENC_DTYPE_U8: want = *p; break;
        case POSENC_DTYPE_U16: memcpy(&u16, p, 2); want = u16; break;
        }
        double got = ((const double *)w.data)[i];
        FUZZ_REQUIRE(got == want || (isnan(got) && isnan(want)), "array_to_f64 %s[%zu]: %g != %g",
                     posenc_dtype_name(dtype), i, got, want);
    }
    posenc_array_free(&w);
    posenc_array_free(&a);
    return 0;
}
