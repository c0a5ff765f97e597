/* test_rope_bf16_kernels.c: white-box test of the bf16 RoPE kernels
 * (src/rope/rope_kernels.h) called directly, token by token, against the
 * scalar kernel: the AVX2 and AVX-512 builds (integer rounding) and the
 * AVX512_BF16 build (vcvtne2ps2bf16, which takes an f32 subnormal as zero,
 * so its inputs are screened: rope_avx512bf16.c). Bit for bit (tolerance
 * none: every path must give the scalar kernel's bits) and the same flags, on
 * the values where the native rounding would differ: inputs and cos/sin at
 * and around the screen's edges (2^-60 and 2^-43), bf16 subnormals, zeros of
 * both signs, results that are f32 subnormals, huge inputs (above big: the
 * flagged heads) and inf/NaN; pair counts that take every loop (all pairs in
 * registers, cos/sin from scratch, leftovers). Each kernel runs only where the
 * CPU has it (the others print a skip line). */
#include "check.h"
#include "../src/common/kernels.h"
#include "../src/rope/rope_kernels.h"

typedef struct {
    const char *name;
    rope_rotate_fn_ fn;
    int supported;
} kernel;

/* deterministic pseudo-random bits (xorshift) */
static uint32_t next_bits(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (uint32_t)(*state >> 16);
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* One bf16 value of the kind `mode` asks for. */
static uint16_t input_value(uint64_t *state, int mode) {
    uint32_t r = next_bits(state);
    uint16_t sign = (uint16_t)((r & 1u) << 15);
    switch (mode) {
    case 0: return posenc_f32_to_bf16((float)((int32_t)(r % 20001u) - 10000) / 2500.0f); /* ordinary */
    case 1: return (uint16_t)(sign | (0x2180u + (r >> 4) % 3u - 1u)); /* around 2^-60: the screen's edge */
    case 2: return (uint16_t)(sign | (1u + (r >> 4) % 0x7fu));         /* bf16 subnormals */
    case 3: return (uint16_t)(sign | ((r >> 4) % 3u == 0 ? 0u : 0x3f80u)); /* +-0 and +-1 */
    case 4: return (uint16_t)(sign | (0x0080u + (r >> 4) % 0x2000u));  /* 2^-126 .. 2^-62: tiny normals */
    case 5: return (uint16_t)(sign | (0x7f00u + (r >> 4) % 0x7fu));    /* huge: above big, may overflow */
    default: return (uint16_t)((r >> 4) % 5u == 0 ? 0x7fc0u : (r >> 4) % 5u == 1 ? 0xff80u : posenc_f32_to_bf16(1.5f));
    }
}

/* cos/sin of a token: ordinary angles, or some of them tiny (at and around
 * 2^-43, f32 subnormals, zeros), or all of them scaled to a tiny magnitude */
static void cos_sin_values(uint64_t *state, int mode, int32_t pairs, float *c, float *s) {
    for (int32_t k = 0; k < pairs; k++) {
        double angle = (double)(next_bits(state) % 100000u) * 1e-3;
        c[k] = (float)cos(angle);
        s[k] = (float)sin(angle);
        if (mode == 2) { /* a tiny magnitude (an attention factor of 2^-120 or 2^-44): results can be subnormal */
            float m = k % 2 ? from_bits(0x03800000u) : from_bits(0x29800000u);
            c[k] *= m;
            s[k] *= m;
        }
        if (mode == 1 && k % 3 == 1) {
            uint32_t r = next_bits(state) % 6u;
            float tiny = r == 0 ? from_bits(0x2a000000u)   /* 2^-43, the edge: kept */
                       : r == 1 ? from_bits(0x29ffffffu)   /* just below: screened */
                       : r == 2 ? from_bits(0x00000003u)   /* f32 subnormal */
                       : r == 3 ? -0.0f
                       : r == 4 ? 1e-30f : -2e-40f;
            if (k % 2) c[k] = tiny;
            else s[k] = tiny;
        }
    }
}

int main(void) {
    kernel kernels[] = {
        {"avx2", rope_rotate_token_bf16_avx2_, posenc_kernel_path_supported(POSENC_PATH_AVX2)},
        {"avx512", rope_rotate_token_bf16_avx512_, posenc_kernel_path_supported(POSENC_PATH_AVX512)},
        {"avx512bf16", rope_rotate_token_bf16_avx512bf16_, posenc_cpu_has_avx512bf16_()},
    };
    const int32_t pair_counts[] = {64, 32, 16, 48, 40, 8, 3, 1};
    const char *input_names[] = {"ordinary", "around 2^-60", "bf16 subnormal", "+-0 and +-1",
                                 "tiny normal", "huge", "inf/NaN"};
    enum { HEADS = 5, MAX_PAIRS = 64, STRIDE = 2 * MAX_PAIRS + 6 };
    static uint16_t base[HEADS * STRIDE], want[HEADS * STRIDE], got[HEADS * STRIDE];
    float c[MAX_PAIRS], s[MAX_PAIRS], scratch[4 * MAX_PAIRS];
    for (size_t q = 0; q < sizeof kernels / sizeof kernels[0]; q++) {
        if (!kernels[q].supported) {
            printf("SKIP %s: this CPU does not run it\n", kernels[q].name);
            continue;
        }
        for (int layout = 0; layout < 2; layout++) {
            posenc_layout L = layout ? POSENC_LAYOUT_HALF : POSENC_LAYOUT_INTERLEAVED;
            long tokens = 0, values = 0, differ = 0, flag_differ = 0;
            char first[200] = "";
            uint64_t state = 0x9e3779b97f4a7c15ull + q * 7 + (uint64_t)layout;
            for (size_t pc = 0; pc < sizeof pair_counts / sizeof pair_counts[0]; pc++) {
                int32_t pairs = pair_counts[pc];
                for (int cs_mode = 0; cs_mode < 3; cs_mode++)
                    for (int mode = 0; mode < 7; mode++)
                        for (int rep = 0; rep < 40; rep++) {
                            /* one head of `mode` among ordinary ones (or all heads, every 4th token) */
                            int odd_head = rep % 4 == 0 ? -1 : rep % HEADS;
                            for (int h = 0; h < HEADS; h++)
                                for (int i = 0; i < STRIDE; i++)
                                    base[h * STRIDE + i] = input_value(&state, odd_head < 0 || h == odd_head ? mode : 0);
                            cos_sin_values(&state, cs_mode, pairs, c, s);
                            uint32_t big = rep % 2 ? 0x7efeu : 0x7f7fu; /* reach for magnitudes 1, and the cap */
                            memcpy(want, base, sizeof base);
                            memcpy(got, base, sizeof base);
                            unsigned fw = rope_rotate_token_bf16_(want, HEADS, STRIDE, pairs, L, c, s, scratch, big);
                            unsigned fg = kernels[q].fn(got, HEADS, STRIDE, pairs, L, c, s, scratch, big);
                            tokens++;
                            for (int i = 0; i < HEADS * STRIDE; i++) {
                                values++;
                                if (want[i] != got[i] && differ++ == 0)
                                    snprintf(first, sizeof first,
                                             "pairs %d, %s inputs, %s cos/sin: value %d is 0x%04x, scalar 0x%04x",
                                             (int)pairs, input_names[mode], cs_mode == 2 ? "tiny-magnitude" : cs_mode ? "some tiny" : "ordinary", i,
                                             got[i], want[i]);
                            }
                            if (fw != fg && flag_differ++ == 0 && !first[0])
                                snprintf(first, sizeof first, "pairs %d, %s inputs: flags %u, scalar %u",
                                         (int)pairs, input_names[mode], fg, fw);
                        }
            }
            CHECK(differ == 0 && flag_differ == 0,
                  "bf16 %s %s = scalar bit for bit: %ld tokens, %ld values, %ld differ, %ld flag sets differ%s%s",
                  kernels[q].name, layout ? "half-split" : "interleaved", tokens, values, differ, flag_differ,
                  first[0] ? "; first: " : "", first);
        }
    }
    return check_finish();
}
