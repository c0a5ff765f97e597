/* test_rope_near_ties.c: RoPE's precise cos/sin are the correctly rounded
 * floats even where the exact value lies next to the midpoint between two
 * floats, so a token's cos/sin never depend on how its call was cut.
 *
 * Before: one call over positions 0 .. 2^20-1 (D 128) and one call per token
 * differed in 3 of 134M values at base 1e4 and 3 at base 5e5, all at such
 * near-ties (the recurrence's double carries ~1e-14 of error, the per-token
 * double-double ~1e-22). Those six (position, pair) cases are pinned here; each is checked
 *   - through every route a position can take: a contiguous call starting 37
 *     before it (the recurrence, 37 steps from its anchor), one call per token
 *     (a run start: the double-double anchor), explicit ids that form no run
 *     (each a run of one), posenc_rope_table_f32 over the range (the
 *     recurrence) and over the ids (the per-pair long double path, which
 *     apply takes beyond the recurrence's range), each path x 1 and 2 threads,
 *     f32 forward and inverse, both layouts: all equal;
 *   - against an independent evaluation: the angle p * w split so that
 *     p * w_hi is exact in long double, sinl/cosl of it, and the small rest
 *     by a first-order term (error ~1e-19, far inside each case's distance
 *     to its midpoint, which is printed);
 * and posenc_f32_from_dd_ (the final rounding of a double-double) is checked
 * on constructed midpoints. White-box: uses src/common/sincos_dd.h and the
 * RoPE plan's long double frequencies. */
#include "check.h"
#include "../src/common/sincos_dd.h"
#include "../src/rope/rope_internal.h"

enum { D = 128, PAIRS = D / 2, BEFORE = 37, AFTER = 26, SPAN = BEFORE + 1 + AFTER };

/* the near-ties found over positions 0 .. 2^20-1, three at each base: channel
 * in HF's half-split layout (pair = channel % 64; below 64: cos, else sin) */
static const struct {
    double base;
    int64_t position;
    int channel;
} cases[] = {{1e4, 392289, 9},    {1e4, 577502, 66},   {1e4, 861457, 7},
             {5e5, 171621, 91},   {5e5, 402405, 10},   {5e5, 872905, 103}};

/* cos or sin of p * w, w a long double (64-bit mantissa), to ~2e-19: w = w1 + w2
 * with w1 = w's top 24 bits, so a = p * w1 is exact (p < 2^20: 44 bits); b = p * w2
 * (|b| < 2^-4) rounds at ~1e-21; then sin(a + b) = sin a cos b + cos a sin b, with
 * glibc's sinl/cosl (exact reduction, ~1 long double ULP). */
static long double oracle(long double w, int64_t p, int want_sin) {
    long double w1 = (long double)(float)w;
    long double w2 = w - w1; /* exact */
    long double a = (long double)p * w1, b = (long double)p * w2;
    long double sa = sinl(a), ca = cosl(a), sb = sinl(b), cb = cosl(b);
    return want_sin ? sa * cb + ca * sb : ca * cb - sa * sb;
}

static int64_t bits_of(float f) {
    int32_t i;
    memcpy(&i, &f, 4);
    return i;
}

static void check_from_dd(void) {
    const float one = 1.0f, up = nextafterf(1.0f, 2.0f), below = nextafterf(1.0f, 0.0f);
    const double mid_up = 0.5 * ((double)one + (double)up), mid_below = 0.5 * ((double)one + (double)below);
    CHECK(posenc_f32_from_dd_(mid_up, 0x1p-80) == up, "midpoint above 1 plus 2^-80 rounds up");
    CHECK(posenc_f32_from_dd_(mid_up, -0x1p-80) == one, "midpoint above 1 minus 2^-80 rounds down");
    CHECK(posenc_f32_from_dd_(mid_up, 0.0) == one, "exactly the midpoint rounds to even (1.0f)");
    CHECK(posenc_f32_from_dd_(mid_below, 0x1p-90) == one, "midpoint below 1 (the binade edge) plus 2^-90 -> 1");
    CHECK(posenc_f32_from_dd_(mid_below, -0x1p-90) == below, "midpoint below 1 minus 2^-90 -> the float below");
    double h = nextafter(mid_up, 0.0); /* one double ULP under the midpoint: (float)h says 1 */
    CHECK(posenc_f32_from_dd_(h, 0x1.8p-52) == up, "a double under the midpoint plus 1.5 double ULPs crosses it");
    CHECK(posenc_f32_from_dd_(h, 0x1p-60) == one, "... plus less than a ULP does not");
    CHECK(posenc_f32_from_dd_(-mid_up, -0x1p-80) == -up && posenc_f32_from_dd_(-mid_up, 0x1p-80) == -one,
          "the negative mirror");
    CHECK(posenc_f32_from_dd_(0.75, 0x1p-70) == 0.75f, "a float plus a tiny rest stays that float");
}

/* x = [cos | sin] after rotating a unit vector (half split: first half 1, second 0) */
static void unit_rows(float *x, size_t tokens) {
    for (size_t t = 0; t < tokens; t++)
        for (int k = 0; k < D; k++) x[t * D + (size_t)k] = k < PAIRS ? 1.0f : 0.0f;
}

int main(void) {
    check_from_dd();
    posenc_error err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        posenc_rope_params params;
        posenc_rope_params_default(&params, D);
        params.base = cases[i].base;
        rope_plan_ plan;
        if (rope_plan_create_(&params, 0, &plan, &err) != POSENC_OK) {
            printf("plan: %s\n", err.message);
            return EXIT_FAILURE;
        }
        const int64_t P = cases[i].position;
        const int ch = cases[i].channel, pair = ch % PAIRS, want_sin = ch >= PAIRS;
        long double truth = oracle(plan.inv[pair], P, want_sin);
        float right = (float)truth; /* long double -> float: one rounding */
        float other = nextafterf(right, (long double)right < truth ? INFINITY : -INFINITY);
        long double mid = 0.5L * ((long double)right + (long double)other);
        printf("base %g, position %lld pair %d (%s): exact %.21Lg, %.3Lg from the midpoint (a float ULP: %.3g)\n",
               cases[i].base, (long long)P, pair, want_sin ? "sin" : "cos", truth, fabsl(truth - mid),
               fabs((double)other - (double)right));
        CHECK(fabsl(truth - mid) > 1e-17L, "the oracle (~1e-19) is decisive for this case");
        for (int inverse = 0; inverse < 2; inverse++)
            for (int path = 0; path < 3; path++)
                for (int threads = 1; threads <= 2; threads++) {
                    static const posenc_kernel_path paths[] = {POSENC_PATH_SCALAR, POSENC_PATH_AVX2, POSENC_PATH_AVX512};
                    if (!posenc_kernel_path_supported(paths[path])) continue;
                    posenc_exec exec;
                    posenc_exec_default(&exec);
                    exec.path = paths[path];
                    exec.threads = threads;
                    float run[SPAN * D], single[SPAN * D], scattered[SPAN * D];
                    int64_t ids[SPAN];
                    unit_rows(run, SPAN);
                    unit_rows(single, SPAN);
                    unit_rows(scattered, SPAN);
                    /* 1. one contiguous call: P is 37 steps past the run's anchor */
                    for (int t = 0; t < SPAN; t++) ids[t] = P - BEFORE + t;
                    posenc_rope_view view = posenc_rope_view_contiguous(SPAN, 1, D);
                    posenc_status st = posenc_rope_apply_exec(&params, 0, POSENC_LAYOUT_HALF, &view, ids, inverse,
                                                              POSENC_DTYPE_F32, run, SPAN * D, &exec, &err);
                    /* 2. one call per token: each a run of one (the double-double anchor) */
                    posenc_rope_view one = posenc_rope_view_contiguous(1, 1, D);
                    for (int t = 0; t < SPAN && st == POSENC_OK; t++)
                        st = posenc_rope_apply_exec(&params, 0, POSENC_LAYOUT_HALF, &one, ids + t, inverse,
                                                    POSENC_DTYPE_F32, single + t * D, D, &exec, &err);
                    /* 3. the same positions shuffled (steps of 29 mod 64: no two neighbours
                     * consecutive): each token a run of one */
                    int64_t order[SPAN];
                    for (int t = 0; t < SPAN; t++) order[t] = ids[(t * 29) % SPAN];
                    if (st == POSENC_OK)
                        st = posenc_rope_apply_exec(&params, 0, POSENC_LAYOUT_HALF, &view, order, inverse,
                                                    POSENC_DTYPE_F32, scattered, SPAN * D, &exec, &err);
                    if (st != POSENC_OK) {
                        CHECK(0, "apply: %s", err.message);
                        continue;
                    }
                    int same = 1;
                    for (int t = 0; t < SPAN; t++) {
                        int s = (t * 29) % SPAN; /* scattered row t holds position ids[s] */
                        same &= memcmp(run + t * D, single + t * D, D * sizeof(float)) == 0;
                        same &= memcmp(scattered + t * D, run + s * D, D * sizeof(float)) == 0;
                    }
                    float got = run[BEFORE * D + ch];
                    float want = inverse ? (want_sin ? -right : right) : right;
                    CHECK(same && bits_of(got) == bits_of(want),
                          "%s x%d %s: one call = per token = scattered ids over %d tokens; position %lld channel %d "
                          "= %.9g (correctly rounded %.9g)",
                          posenc_kernel_path_name(paths[path]), threads, inverse ? "inverse" : "forward", SPAN,
                          (long long)P, ch, got, want);
                }
        /* the table entry point: its range goes through the recurrence too */
        float cos_t[SPAN * PAIRS], sin_t[SPAN * PAIRS];
        posenc_positions range = posenc_positions_range(P - BEFORE, SPAN);
        posenc_status st = posenc_rope_table_f32(&params, 0, &range, 0, cos_t, sin_t, SPAN * PAIRS, &err);
        float got = (want_sin ? sin_t : cos_t)[BEFORE * PAIRS + pair];
        CHECK(st == POSENC_OK && bits_of(got) == bits_of(right), "posenc_rope_table_f32 over %lld..: %.9g",
              (long long)(P - BEFORE), got);
        /* the table over the same ids as a list: evaluated per pair in long double */
        int64_t list[SPAN];
        for (int t = 0; t < SPAN; t++) list[t] = P - BEFORE + t;
        posenc_positions by_id = posenc_positions_ids(list, SPAN);
        st = posenc_rope_table_f32(&params, 0, &by_id, 0, cos_t, sin_t, SPAN * PAIRS, &err);
        got = (want_sin ? sin_t : cos_t)[BEFORE * PAIRS + pair];
        CHECK(st == POSENC_OK && bits_of(got) == bits_of(right),
              "posenc_rope_table_f32 over the ids %lld.. (per pair, long double): %.9g", (long long)(P - BEFORE), got);
        rope_plan_free_(&plan);
    }
    return check_finish();
}
