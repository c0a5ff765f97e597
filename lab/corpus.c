/* corpus.c: the text the lab's language model reads (docs/lab.md, "Data").
 * Default: Debian's `fortunes` files, read at run time; never committed. */
#define _DEFAULT_SOURCE /* dirent d_type not needed; scandir/alphasort */
#include "experiments.h"

#include <dirent.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

posenc_status lab_exp_fail(posenc_error *err, posenc_status status, const char *fmt, ...) {
    if (err) {
        err->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

static int plain_text_name(const struct dirent *e) {
    const char *n = e->d_name;
    size_t len = strlen(n);
    if (n[0] == '.') return 0;
    if (len > 4 && strcmp(n + len - 4, ".dat") == 0) return 0;
    if (len > 3 && strcmp(n + len - 3, ".u8") == 0) return 0;
    return 1;
}

static posenc_status append_file(lab_corpus *c, size_t *cap, const char *path, posenc_error *err) {
    void *data = NULL;
    size_t size = 0;
    posenc_status st = posenc_file_read_all(path, (size_t)1 << 31, &data, &size, err);
    if (st != POSENC_OK) return st;
    if (c->size + size + 1 > *cap) {
        size_t want = (c->size + size + 1) * 2;
        uint8_t *grown = realloc(c->bytes, want);
        if (!grown) {
            free(data);
            return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory reading %s (%zu bytes)", path, size);
        }
        c->bytes = grown;
        *cap = want;
    }
    memcpy(c->bytes + c->size, data, size);
    c->size += size;
    c->bytes[c->size++] = '\n';
    c->files++;
    free(data);
    return POSENC_OK;
}

posenc_status lab_corpus_load(const char *const *paths, int count, size_t min_bytes, lab_corpus *out,
                              posenc_error *err) {
    if (!out) return lab_exp_fail(err, POSENC_ERR_NULL_POINTER, "corpus is NULL");
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    posenc_status st = POSENC_OK;
    if (count > 0) {
        for (int i = 0; i < count && st == POSENC_OK; i++) st = append_file(out, &cap, paths[i], err);
    } else {
        struct dirent **names = NULL;
        int n = scandir(LAB_CORPUS_DEFAULT_DIR, &names, plain_text_name, alphasort);
        if (n < 0)
            return lab_exp_fail(err, POSENC_ERR_IO,
                                "default corpus %s not found: install Debian's `fortunes` (scripts/deps) or pass --text FILE...",
                                LAB_CORPUS_DEFAULT_DIR);
        for (int i = 0; i < n; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", LAB_CORPUS_DEFAULT_DIR, names[i]->d_name);
            if (st == POSENC_OK) st = append_file(out, &cap, path, err);
            free(names[i]);
        }
        free(names);
    }
    if (st == POSENC_OK && out->size < min_bytes)
        st = lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "corpus has %zu bytes from %d files; at least %zu needed",
                          out->size, out->files, min_bytes);
    if (st == POSENC_OK) st = lab_corpus_split(out, err);
    if (st != POSENC_OK) lab_corpus_free(out);
    return st;
}

/* ---- the long-document corpus: the Python standard library and the license texts ---- */
static int by_bytes(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static int skipped_dir(const char *name, int top) {
    /* installed packages and the optional test suite differ between machines */
    return strcmp(name, "__pycache__") == 0 || strcmp(name, "site-packages") == 0 || strcmp(name, "dist-packages") == 0 ||
           (top && (strcmp(name, "test") == 0 || strcmp(name, "idlelib") == 0));
}

/* Depth first, each directory's entries in bytewise name order; regular files only
 * (symbolic links are not followed: where they point differs between machines). */
static posenc_status walk(lab_corpus *c, size_t *cap, const char *dir, const char *suffix, int top, posenc_error *err) {
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, by_bytes);
    if (n < 0) return lab_exp_fail(err, POSENC_ERR_IO, "cannot read directory %s", dir);
    posenc_status st = POSENC_OK;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char path[4096];
        struct stat sb;
        if (st == POSENC_OK && name[0] != '.' && (size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path &&
            lstat(path, &sb) == 0) {
            size_t len = strlen(name), sl = suffix ? strlen(suffix) : 0;
            if (S_ISDIR(sb.st_mode) && suffix && !skipped_dir(name, top)) st = walk(c, cap, path, suffix, 0, err);
            else if (S_ISREG(sb.st_mode) && (!suffix || (len > sl && strcmp(name + len - sl, suffix) == 0)))
                st = append_file(c, cap, path, err);
        }
        free(names[i]);
    }
    free(names);
    return st;
}

posenc_status lab_corpus_load_pystdlib(const char *root, const char *licenses, size_t min_bytes, lab_corpus *out,
                                       posenc_error *err) {
    if (!out) return lab_exp_fail(err, POSENC_ERR_NULL_POINTER, "corpus is NULL");
    memset(out, 0, sizeof *out);
    if (!root) root = LAB_PYSTDLIB_DIR;
    if (!licenses) licenses = LAB_LICENSES_DIR;
    struct stat sb;
    if (stat(root, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return lab_exp_fail(err, POSENC_ERR_IO,
                            "the pystdlib corpus needs the Python standard library at %s (Debian's libpython3.11-stdlib), "
                            "which is missing: install it, or pass --text FILE...", root);
    if (stat(licenses, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return lab_exp_fail(err, POSENC_ERR_IO,
                            "the pystdlib corpus needs the license texts at %s (Debian's base-files), which are missing: "
                            "pass --text FILE... instead", licenses);
    size_t cap = 0;
    posenc_status st = walk(out, &cap, root, ".py", 1, err);
    int py_files = out->files;
    if (st == POSENC_OK && py_files == 0)
        st = lab_exp_fail(err, POSENC_ERR_IO, "the pystdlib corpus found no .py file under %s", root);
    if (st == POSENC_OK) st = walk(out, &cap, licenses, NULL, 1, err);
    if (st == POSENC_OK && out->size < min_bytes)
        st = lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "pystdlib corpus has %zu bytes from %d files; at least %zu needed",
                          out->size, out->files, min_bytes);
    if (st == POSENC_OK) st = lab_corpus_split(out, err);
    if (st != POSENC_OK) lab_corpus_free(out);
    return st;
}


/* FNV-1a 64: not a cryptographic hash; it tells an edited or another corpus from
 * the same one (with the size), which is all a resume needs. */
static void corpus_hash(lab_corpus *c) {
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < c->size; i++) h = (h ^ c->bytes[i]) * 0x100000001b3u;
    snprintf(c->hash, sizeof c->hash, "%016llx", (unsigned long long)h);
}

posenc_status lab_corpus_split(lab_corpus *c, posenc_error *err) {
    if (!c || !c->bytes) return lab_exp_fail(err, POSENC_ERR_NULL_POINTER, "corpus is empty");
    free(c->train);
    free(c->valid);
    free(c->tune_train);
    free(c->dev);
    c->train = malloc(c->size);
    c->valid = malloc(c->size / 10 + LAB_SPLIT_BLOCK);
    c->tune_train = malloc(c->size);
    c->dev = malloc(c->size / 10 + LAB_SPLIT_BLOCK);
    if (!c->train || !c->valid || !c->tune_train || !c->dev)
        return lab_exp_fail(err, POSENC_ERR_OUT_OF_MEMORY, "out of memory splitting %zu bytes", c->size);
    c->train_size = c->valid_size = c->tune_train_size = c->dev_size = 0;
    corpus_hash(c);
    for (size_t start = 0, block = 0; start < c->size; start += LAB_SPLIT_BLOCK, block++) {
        size_t n = c->size - start < LAB_SPLIT_BLOCK ? c->size - start : LAB_SPLIT_BLOCK;
        if (block % 10 == 9) {
            memcpy(c->valid + c->valid_size, c->bytes + start, n);
            c->valid_size += n;
            continue;
        }
        memcpy(c->train + c->train_size, c->bytes + start, n);
        c->train_size += n;
        /* tuning: dev is a tenth of train, never a validation block; the tuning runs train on the rest */
        uint8_t *to = block % 10 == LAB_DEV_BLOCK ? c->dev + c->dev_size : c->tune_train + c->tune_train_size;
        memcpy(to, c->bytes + start, n);
        *(block % 10 == LAB_DEV_BLOCK ? &c->dev_size : &c->tune_train_size) += n;
    }
    if (c->valid_size == 0)
        return lab_exp_fail(err, POSENC_ERR_INVALID_ARGUMENT, "corpus of %zu bytes is too small for a validation split (needs > %d)",
                            c->size, 9 * LAB_SPLIT_BLOCK);
    return POSENC_OK;
}

void lab_corpus_free(lab_corpus *c) {
    if (!c) return;
    free(c->bytes);
    free(c->train);
    free(c->valid);
    free(c->tune_train);
    free(c->dev);
    memset(c, 0, sizeof *c);
}
