/* test_dtype.c: f16/bf16 conversions against exhaustive and known values. */
#include "check.h"

int main(void) {
    /* every f16 bit pattern round-trips through f32 (NaNs stay NaN) */
    int bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        float f = posenc_f16_to_f32((uint16_t)b);
        uint16_t back = posenc_f32_to_f16(f);
        if (isnan(f) ? !isnan(posenc_f16_to_f32(back)) : back != b) bad++;
    }
    CHECK(bad == 0, "all 65536 f16 patterns round-trip through f32 (%d bad)", bad);
    bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        float f = posenc_bf16_to_f32((uint16_t)b);
        uint16_t back = posenc_f32_to_bf16(f);
        if (isnan(f) ? !isnan(posenc_bf16_to_f32(back)) : back != b) bad++;
    }
    CHECK(bad == 0, "all 65536 bf16 patterns round-trip through f32 (%d bad)", bad);
    /* facts from conventions.md section 12 */
    CHECK(posenc_round_to_bf16(257.0f) == 256.0f, "bf16(257) = %g (256)", posenc_round_to_bf16(257.0f));
    CHECK(posenc_round_to_bf16(4097.0f) == 4096.0f, "bf16(4097) = %g (4096)", posenc_round_to_bf16(4097.0f));
    CHECK(posenc_round_to_bf16(15962.0f) == 15936.0f, "bf16(15962) = %g (15936)", posenc_round_to_bf16(15962.0f));
    CHECK(posenc_round_to_bf16(65519.0f) == 65536.0f, "bf16(65519) = %g (65536)", posenc_round_to_bf16(65519.0f));
    CHECK(posenc_round_to_f16(2049.0f) == 2048.0f, "f16(2049) = %g (2048, ties to even)", posenc_round_to_f16(2049.0f));
    CHECK(posenc_round_to_f16(15962.0f) == 15960.0f, "f16(15962) = %g (15960)", posenc_round_to_f16(15962.0f));
    CHECK(isinf(posenc_round_to_f16(65520.0f)), "f16(65520) = %g (inf)", posenc_round_to_f16(65520.0f));
    CHECK(posenc_round_to_f16(65504.0f) == 65504.0f, "f16(65504) = %g (max finite)", posenc_round_to_f16(65504.0f));
    CHECK(posenc_round_to_f16(5.9604644775390625e-8f) == 5.9604644775390625e-8f, "f16 smallest subnormal kept");
    CHECK(posenc_round_to_f16(2.9802322387695312e-8f) == 0.0f, "f16: half the smallest subnormal ties to 0");
    CHECK(posenc_round_to_f16(4.4703483581542969e-8f) == 5.9604644775390625e-8f, "f16: 0.75 x smallest subnormal rounds up");
    /* rounding is to nearest: compare with a direct search over neighbours */
    bad = 0;
    for (float x = -70000.0f; x < 70000.0f; x += 0.37f) {
        float r = posenc_round_to_f16(x);
        if (isinf(r)) continue;
        uint16_t h = posenc_f32_to_f16(x);
        float up = posenc_f16_to_f32((uint16_t)(h + 1)), down = posenc_f16_to_f32((uint16_t)(h - 1));
        if (fabsf(x - r) > fabsf(x - up) || fabsf(x - r) > fabsf(x - down)) bad++;
    }
    CHECK(bad == 0, "f16 rounding picks the nearest neighbour on a 0.37-step sweep (%d bad)", bad);
    CHECK(posenc_dtype_size(POSENC_DTYPE_BF16) == 2 && strcmp(posenc_dtype_name(POSENC_DTYPE_BF16), "bf16") == 0,
          "dtype size/name");
    CHECK(strcmp(posenc_strerror(POSENC_ERR_FORMAT), "malformed input") == 0 && posenc_strerror((posenc_status)999)[0],
          "strerror covers codes and unknown values");
    return check_finish();
}
