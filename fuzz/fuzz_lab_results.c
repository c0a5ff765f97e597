/* fuzz_lab_results.c: the lab results reader (base/lab_results.c) on hostile
 * JSON lines, and what reads its runs: lab claims (lab/claims.c) and lab plot's
 * SVG (render/lab_plot.c), as `posenc lab merge/claims/plot` and `report --lab` do.
 *
 * Input: the bytes become a results file (a private temporary file).
 * Promises: the read returns NULL (a message was printed) or an array whose every
 * run is an object with a string id and whose every number is finite, within 1e15,
 * bpb >= 0 and accuracy in [0, 1] (what the reader promises); reading twice gives
 * the same runs; the claims table and the plot (0, 1 or 2) never see a non-finite
 * number, and a plot written with 0 holds no nan/inf in a geometry attribute. */
#include "fuzz_common.h"

#include "render.h"
#include "experiments.h"

#include <cjson/cJSON.h>
#include <math.h>

static char path[256];

static void remove_file(void) {
    if (path[0]) unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/posenc-fuzz-lab-results-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("fuzz_lab_results: mkstemp");
        abort();
    }
    close(fd);
    atexit(remove_file);
    FILE *null_out = fopen("/dev/null", "w");
    if (null_out) stderr = null_out, stdout = null_out;
    return 0;
}

static int numbers_ok(const cJSON *item) {
    if (cJSON_IsNumber(item)) {
        double v = item->valuedouble;
        const char *k = item->string ? item->string : "";
        return isfinite(v) && fabs(v) <= 1e15 && !(strncmp(k, "bpb", 3) == 0 && v < 0) &&
               !(strcmp(k, "accuracy") == 0 && (v < 0 || v > 1));
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, item) if (!numbers_ok(c)) return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) LLVMFuzzerInitialize(NULL, NULL);
    FILE *fp = fopen(path, "wb");
    if (!fp) abort();
    fwrite(data, 1, size, fp);
    fclose(fp);
    const char *paths[1] = {path};
    cJSON *runs = cli_lab_read_results("fuzz", paths, 1, false, CLI_LAB_KEEP_CURVE);
    cJSON *again = cli_lab_read_results("fuzz", paths, 1, false, CLI_LAB_KEEP_CURVE);
    FUZZ_REQUIRE((runs == NULL) == (again == NULL), "two reads of one file disagree");
    if (runs) {
        FUZZ_REQUIRE(cJSON_Compare(runs, again, 1), "two reads of one file give different runs");
        const cJSON *r;
        cJSON_ArrayForEach(r, runs) {
            FUZZ_REQUIRE(cJSON_IsObject(r) && cJSON_IsString(cJSON_GetObjectItem(r, "id")), "a run without a string id");
            FUZZ_REQUIRE(numbers_ok(r), "a run kept a non-finite or out-of-range number");
        }
        posenc_error err = {0};
        char *table = NULL;
        posenc_status st = lab_claims_markdown(runs, &table, NULL, &err);
        FUZZ_REQUIRE(st == POSENC_OK ? table != NULL : err.message[0] != '\0', "claims: status %d without a table or message", st);
        if (table) FUZZ_REQUIRE(!strstr(table, "nan") && !strstr(table, "inf "), "claims table shows nan/inf");
        free(table);
        static const char *const metrics[] = {"bpb", "bpb_sliding", "accuracy", "curve"};
        for (int m = 0; m < 4; m++) {
            cli_buffer svg = {0};
            int rc = cli_lab_plot_svg("fuzz", runs, path, NULL, metrics[m], &svg);
            FUZZ_REQUIRE(rc == 0 || rc == 1 || rc == 2, "plot exit %d", rc);
            if (rc == 0) FUZZ_REQUIRE(!fuzz_svg_bad_geometry(svg.data, svg.len), "plot %s wrote nan/inf geometry", metrics[m]);
            cli_buffer_free(&svg);
        }
    }
    cJSON_Delete(runs);
    cJSON_Delete(again);
    return 0;
}
