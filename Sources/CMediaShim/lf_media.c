// See include/lf_media.h. Each function releases every libvips object it creates before
// returning; on failure the reason is in libvips' error buffer (lf_media_error_copy).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
// Casts without GType checks: those would call into libvips before it is loaded.
#define G_DISABLE_CAST_CHECKS 1
#include <vips/vips.h>
#include "lf_media.h"

// libvips is opened at first use (dlopen), not linked: it and the ~90 libraries it pulls in
// (glib, cairo, pango, libheif, …) cost every process ~25 ms at start and their pages in memory,
// though only thumbnails, compression and location stripping need them. The function pointers
// have the exact types of the libvips/glib prototypes (__typeof__), so calls are checked as before.
static struct {
    __typeof__(&vips_init) vips_init;
    __typeof__(&vips_version) vips_version;
    __typeof__(&vips_concurrency_set) vips_concurrency_set;
    __typeof__(&vips_cache_set_max) vips_cache_set_max;
    __typeof__(&vips_cache_set_max_mem) vips_cache_set_max_mem;
    __typeof__(&vips_block_untrusted_set) vips_block_untrusted_set;
    __typeof__(&vips_leak_set) vips_leak_set;
    __typeof__(&vips_image_new_from_buffer) vips_image_new_from_buffer;
    __typeof__(&vips_image_get_width) vips_image_get_width;
    __typeof__(&vips_image_get_height) vips_image_get_height;
    __typeof__(&vips_image_get_typeof) vips_image_get_typeof;
    __typeof__(&vips_image_get_int) vips_image_get_int;
    __typeof__(&vips_image_get_string) vips_image_get_string;
    __typeof__(&vips_image_get_blob) vips_image_get_blob;
    __typeof__(&vips_thumbnail_buffer) vips_thumbnail_buffer;
    __typeof__(&vips_image_hasalpha) vips_image_hasalpha;
    __typeof__(&vips_array_double_newv) vips_array_double_newv;
    __typeof__(&vips_flatten) vips_flatten;
    __typeof__(&vips_area_unref) vips_area_unref;
    __typeof__(&vips_copy) vips_copy;
    __typeof__(&vips_image_map) vips_image_map;
    __typeof__(&vips_image_remove) vips_image_remove;
    __typeof__(&vips_jpegsave_buffer) vips_jpegsave_buffer;
    __typeof__(&vips_image_new) vips_image_new;
    __typeof__(&vips_object_local_array) vips_object_local_array;
    __typeof__(&vips_xyz) vips_xyz;
    __typeof__(&vips_remainder_const1) vips_remainder_const1;
    __typeof__(&vips_bandjoin_const1) vips_bandjoin_const1;
    __typeof__(&vips_cast_uchar) vips_cast_uchar;
    __typeof__(&vips_image_get_bands) vips_image_get_bands;
    __typeof__(&vips_image_write_to_memory) vips_image_write_to_memory;
    __typeof__(&vips_error_buffer_copy) vips_error_buffer_copy;
    __typeof__(&g_log_set_handler) g_log_set_handler;
    __typeof__(&g_object_unref) g_object_unref;
    __typeof__(&g_free) g_free;
    __typeof__(&g_strlcpy) g_strlcpy;
    __typeof__(&g_memdup2) g_memdup2;
    __typeof__(&g_str_has_prefix) g_str_has_prefix;
    __typeof__(&g_slist_prepend) g_slist_prepend;
    __typeof__(&g_strdup) g_strdup;
    __typeof__(&g_slist_free_full) g_slist_free_full;
    // Filters and re-encoding (lf_media_render).
    __typeof__(&vips_colourspace) vips_colourspace;
    __typeof__(&vips_image_new_matrix_from_array) vips_image_new_matrix_from_array;
    __typeof__(&vips_recomb) vips_recomb;
    __typeof__(&vips_linear1) vips_linear1;
    __typeof__(&vips_image_new_from_memory_copy) vips_image_new_from_memory_copy;
    __typeof__(&vips_maplut) vips_maplut;
    __typeof__(&vips_heifsave_buffer) vips_heifsave_buffer;
    __typeof__(&vips_type_find) vips_type_find;
    // Previews and thumbnails from the cheapest source (lf_media_quick_thumbnail).
    __typeof__(&vips_jpegload_buffer) vips_jpegload_buffer;
    __typeof__(&vips_heifload_buffer) vips_heifload_buffer;
    __typeof__(&vips_thumbnail_image) vips_thumbnail_image;
    __typeof__(&vips_image_set_int) vips_image_set_int;
    __typeof__(&vips_image_copy_memory) vips_image_copy_memory;
} lf;

static char load_error[256];

static void set_load_error(const char *why) {
    strncpy(load_error, why, sizeof load_error - 1);
    load_error[sizeof load_error - 1] = 0;
}

static int load_libvips(void) {
    void *h = dlopen("libvips.so.42", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error, "cannot load libvips.so.42 (install libvips42): %s", dlerror());
        return -1;
    }
#define LOAD(name) \
    if (!(lf.name = (__typeof__(lf.name))dlsym(h, #name))) { \
        snprintf(load_error, sizeof load_error, "libvips.so.42 lacks %s", #name); \
        return -1; \
    }
    LOAD(vips_init);
    LOAD(vips_version);
    LOAD(vips_concurrency_set);
    LOAD(vips_cache_set_max);
    LOAD(vips_cache_set_max_mem);
    LOAD(vips_block_untrusted_set);
    LOAD(vips_leak_set);
    LOAD(vips_image_new_from_buffer);
    LOAD(vips_image_get_width);
    LOAD(vips_image_get_height);
    LOAD(vips_image_get_typeof);
    LOAD(vips_image_get_int);
    LOAD(vips_image_get_string);
    LOAD(vips_image_get_blob);
    LOAD(vips_thumbnail_buffer);
    LOAD(vips_image_hasalpha);
    LOAD(vips_array_double_newv);
    LOAD(vips_flatten);
    LOAD(vips_area_unref);
    LOAD(vips_copy);
    LOAD(vips_image_map);
    LOAD(vips_image_remove);
    LOAD(vips_jpegsave_buffer);
    LOAD(vips_image_new);
    LOAD(vips_object_local_array);
    LOAD(vips_xyz);
    LOAD(vips_remainder_const1);
    LOAD(vips_bandjoin_const1);
    LOAD(vips_cast_uchar);
    LOAD(vips_image_get_bands);
    LOAD(vips_image_write_to_memory);
    LOAD(vips_error_buffer_copy);
    LOAD(g_log_set_handler);
    LOAD(g_object_unref);
    LOAD(g_free);
    LOAD(g_strlcpy);
    LOAD(g_memdup2);
    LOAD(g_str_has_prefix);
    LOAD(g_slist_prepend);
    LOAD(g_strdup);
    LOAD(g_slist_free_full);
    LOAD(vips_colourspace);
    LOAD(vips_image_new_matrix_from_array);
    LOAD(vips_recomb);
    LOAD(vips_linear1);
    LOAD(vips_image_new_from_memory_copy);
    LOAD(vips_maplut);
    LOAD(vips_heifsave_buffer);
    LOAD(vips_type_find);
    LOAD(vips_jpegload_buffer);
    LOAD(vips_heifload_buffer);
    LOAD(vips_thumbnail_image);
    LOAD(vips_image_set_int);
    LOAD(vips_image_copy_memory);
#undef LOAD
    return 0;
}

static void drop_warning(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain;
    (void)level;
    (void)message;
    (void)data;
}

int lf_media_init(void) {
    if (load_libvips() != 0) return -1;
    // What VIPS_INIT checks: the library's ABI is the one these headers describe.
    if (lf.vips_version(3) - lf.vips_version(5) != VIPS_LIBRARY_CURRENT - VIPS_LIBRARY_AGE) {
        set_load_error("libvips has another ABI version than the one Locafoto was built with");
        return -1;
    }
    if (lf.vips_init("locafoto")) return -1;
    // libvips reports recoverable damage ("premature end of JPEG file", "eXIf: CRC error",
    // "heifload: ignoring nclx profile") as GLib warnings on stderr: not for an agent's
    // stderr. Failures still come back as errors (lf_media_error_copy).
    lf.g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, drop_warning, NULL);
    lf.vips_concurrency_set(1);  // the agent decides how many photos are processed in parallel
    // Operation cache off: entries are keyed by the *address* of caller-owned buffers, which
    // Swift reuses for different photos, and the vault wants no decoded pixels kept around.
    lf.vips_cache_set_max(0);
    lf.vips_cache_set_max_mem(0);
    lf.vips_block_untrusted_set(TRUE);  // e.g. magick/matlab/fits loaders: never for photos
    lf.vips_leak_set(FALSE);
    return 0;
}

int lf_media_read_header(const void *buf, size_t len, lf_media_header *out,
                         void **exif, size_t *exif_len) {
    memset(out, 0, sizeof *out);
    *exif = NULL;
    *exif_len = 0;
    VipsImage *im = lf.vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!im) return -1;
    out->width = lf.vips_image_get_width(im);
    out->height = lf.vips_image_get_height(im);
    int v = 0;
    if (lf.vips_image_get_typeof(im, VIPS_META_ORIENTATION) &&
        !lf.vips_image_get_int(im, VIPS_META_ORIENTATION, &v))
        out->orientation = v;
    out->pages = 1;
    if (lf.vips_image_get_typeof(im, VIPS_META_N_PAGES) &&
        !lf.vips_image_get_int(im, VIPS_META_N_PAGES, &v) && v > 0)
        out->pages = v;
    const char *loader = NULL;
    if (lf.vips_image_get_typeof(im, VIPS_META_LOADER) &&
        !lf.vips_image_get_string(im, VIPS_META_LOADER, &loader) && loader)
        lf.g_strlcpy(out->loader, loader, sizeof out->loader);
    const void *data = NULL;
    size_t n = 0;
    if (lf.vips_image_get_typeof(im, VIPS_META_EXIF_NAME) &&
        !lf.vips_image_get_blob(im, VIPS_META_EXIF_NAME, &data, &n) && data && n > 0) {
        *exif = lf.g_memdup2(data, n);
        *exif_len = n;
    }
    lf.g_object_unref(im);
    return 0;
}

// Collects the names of header fields to remove (removing while mapping is not allowed).
static void *collect_location_fields(VipsImage *image, const char *name, GValue *value, void *a) {
    (void)image;
    (void)value;
    GSList **names = a;
    if (lf.g_str_has_prefix(name, "exif-ifd3-") || strcmp(name, VIPS_META_XMP_NAME) == 0)
        *names = lf.g_slist_prepend(*names, lf.g_strdup(name));
    return NULL;
}

// Composites an image with alpha onto white (JPEG and the filters keep no alpha), in place: *t is
// replaced (the old one released); on failure *t is released and NULL. 0 or -1.
static int onto_white(VipsImage **t) {
    if (!lf.vips_image_hasalpha(*t)) return 0;
    VipsArrayDouble *white = lf.vips_array_double_newv(1, 255.0);
    VipsImage *f = NULL;
    int r = lf.vips_flatten(*t, &f, "background", white, NULL);
    lf.vips_area_unref(VIPS_AREA(white));
    lf.g_object_unref(*t);
    *t = f;
    return r ? -1 : 0;
}

int lf_media_resize_to_jpeg(const void *buf, size_t len, const lf_media_jpeg_options *opt,
                            void **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    VipsImage *t = NULL;
    int r;
    if (opt->keep_metadata)
        r = lf.vips_thumbnail_buffer((void *)buf, len, &t, opt->max_side, "height", opt->max_side,
                                  "size", VIPS_SIZE_DOWN, NULL);
    else  // the ICC profile goes with the metadata: convert to sRGB so colours stay right
        r = lf.vips_thumbnail_buffer((void *)buf, len, &t, opt->max_side, "height", opt->max_side,
                                  "size", VIPS_SIZE_DOWN, "export_profile", "srgb", NULL);
    if (r) return -1;

    if (onto_white(&t)) return -1;  // JPEG has no alpha

    if (opt->keep_metadata && opt->strip_location) {
        // At save, libvips rebuilds EXIF from "exif-data" and removes every tag whose
        // "exif-ifdN-Name" field is gone: dropping the ifd3 (GPS) fields drops the GPS IFD.
        // XMP may repeat the position (exif:GPSLatitude...): it goes too.
        VipsImage *c = NULL;
        if (lf.vips_copy(t, &c, NULL)) {  // fields of a shared image must not be modified
            lf.g_object_unref(t);
            return -1;
        }
        lf.g_object_unref(t);
        t = c;
        GSList *names = NULL;
        lf.vips_image_map(t, collect_location_fields, &names);
        for (GSList *p = names; p; p = p->next) lf.vips_image_remove(t, p->data);
        lf.g_slist_free_full(names, g_free);
    }

    r = lf.vips_jpegsave_buffer(t, out, out_len, "Q", opt->quality, "strip", !opt->keep_metadata,
                             "optimize_coding", TRUE, NULL);
    lf.g_object_unref(t);
    return r ? -1 : 0;
}

// Whether a thumbnail of tw x th stored pixels shows the same picture as the tw x th photo: the
// same aspect ratio within 3 % (a camera that letterboxes a 16:9 photo into a 160x120 thumbnail
// would otherwise give a preview with black bars), and a sane size.
static int same_picture(int tw, int th, int w, int h) {
    if (tw <= 0 || th <= 0 || w <= 0 || h <= 0 || tw > 4096 || th > 4096) return 0;
    double a = (double)tw / th, b = (double)w / h;
    double d = a > b ? a / b : b / a;
    return d <= 1.03;
}

// An embedded thumbnail's pixels, decoded now (they are few): a damaged one fails here, while
// the photo can still be decoded instead. Takes `im`; NULL on failure (the error cleared).
static VipsImage *decoded(VipsImage *im) {
    VipsImage *m = lf.vips_image_copy_memory(im);
    lf.g_object_unref(im);
    if (!m) lf_media_free(lf.vips_error_buffer_copy());
    return m;
}

// The JPEG's EXIF thumbnail (IFD1, which libvips attaches as "jpeg-thumbnail-data"), decoded,
// turned by the photo's EXIF orientation (the thumbnail is stored as the sensor saw it, like the
// photo) and shrunk to max_side. NULL when there is none, or none that fits (see same_picture).
static VipsImage *exif_thumbnail(VipsImage *photo, const lf_media_quick_options *opt) {
    const void *data = NULL;
    size_t n = 0;
    if (!lf.vips_image_get_typeof(photo, "jpeg-thumbnail-data") ||
        lf.vips_image_get_blob(photo, "jpeg-thumbnail-data", &data, &n) || !data || n < 4)
        return NULL;
    const unsigned char *b = data;
    if (b[0] != 0xFF || b[1] != 0xD8) return NULL;  // only JPEG thumbnails (not TIFF strips)
    VipsImage *t = NULL;
    // The JPEG loader only, on `photo`'s copy of the blob (decoded before `photo` goes).
    if (lf.vips_jpegload_buffer((void *)data, n, &t, "access", VIPS_ACCESS_SEQUENTIAL, NULL)) return NULL;
    int tw = lf.vips_image_get_width(t), th = lf.vips_image_get_height(t);
    if (!same_picture(tw, th, lf.vips_image_get_width(photo), lf.vips_image_get_height(photo)) ||
        (tw > th ? tw : th) < opt->min_embedded_side) {
        lf.g_object_unref(t);
        return NULL;
    }
    VipsImage *c = NULL;
    int r = lf.vips_copy(t, &c, NULL);
    lf.g_object_unref(t);
    if (r) return NULL;
    int orientation = 0;
    if (lf.vips_image_get_typeof(photo, VIPS_META_ORIENTATION) &&
        !lf.vips_image_get_int(photo, VIPS_META_ORIENTATION, &orientation) && orientation >= 1 && orientation <= 8)
        lf.vips_image_set_int(c, VIPS_META_ORIENTATION, orientation);
    VipsImage *out = NULL;
    r = lf.vips_thumbnail_image(c, &out, opt->max_side, "height", opt->max_side, "size", VIPS_SIZE_DOWN, NULL);
    lf.g_object_unref(c);
    return r ? NULL : decoded(out);
}

// The HEIF/AVIF file's thumbnail item, shrunk to max_side; NULL when the file has none (libvips
// then opens the primary image, which is larger) or none large enough.
static VipsImage *heif_thumbnail(const void *buf, size_t len, VipsImage *photo, const lf_media_quick_options *opt) {
    VipsImage *t = NULL;
    if (lf.vips_heifload_buffer((void *)buf, len, &t, "thumbnail", TRUE, NULL)) return NULL;
    int tw = lf.vips_image_get_width(t), th = lf.vips_image_get_height(t);
    int w = lf.vips_image_get_width(photo), h = lf.vips_image_get_height(photo);
    if ((tw >= w && th >= h) || !same_picture(tw, th, w, h) || (tw > th ? tw : th) < opt->min_embedded_side) {
        lf.g_object_unref(t);
        return NULL;
    }
    VipsImage *out = NULL;
    int r = lf.vips_thumbnail_image(t, &out, opt->max_side, "height", opt->max_side, "size", VIPS_SIZE_DOWN, NULL);
    lf.g_object_unref(t);
    return r ? NULL : decoded(out);
}

int lf_media_quick_thumbnail(const void *buf, size_t len, const lf_media_quick_options *opt, void **out,
                             size_t *out_len, int *source) {
    *out = NULL;
    *out_len = 0;
    *source = LF_THUMB_NONE;
    VipsImage *photo = lf.vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!photo) return -1;
    const char *loader = NULL;
    if (lf.vips_image_get_typeof(photo, VIPS_META_LOADER)) lf.vips_image_get_string(photo, VIPS_META_LOADER, &loader);
    int jpeg = loader && lf.g_str_has_prefix(loader, "jpegload");
    int heif = loader && lf.g_str_has_prefix(loader, "heifload");
    int webp = loader && lf.g_str_has_prefix(loader, "webpload");
    double pixels = (double)lf.vips_image_get_width(photo) * lf.vips_image_get_height(photo);

    VipsImage *t = NULL;
    if (opt->min_embedded_side > 0) {
        if (jpeg && (t = exif_thumbnail(photo, opt))) *source = LF_THUMB_EXIF;
        else if (heif && (t = heif_thumbnail(buf, len, photo, opt))) *source = LF_THUMB_HEIF_ITEM;
    }
    lf.g_object_unref(photo);  // an embedded thumbnail is already decoded (see decoded())
    if (!t && opt->embedded_only) return 0;
    if (!t) {
        // JPEG decodes at 1/2, 1/4 or 1/8 of its size when that is still large enough
        // (shrink-on-load), WebP scales while decoding: the decode is bounded by the output
        // size. Every other format decodes every pixel, which is allowed only for small images
        // or when the caller can wait.
        int bounded = jpeg || webp;
        if (!bounded && !opt->allow_full_decode && pixels > (double)opt->max_full_decode_pixels) return 0;
        if (lf.vips_thumbnail_buffer((void *)buf, len, &t, opt->max_side, "height", opt->max_side, "size",
                                     VIPS_SIZE_DOWN, "export_profile", "srgb", NULL))
            return -1;
        *source = bounded ? LF_THUMB_SHRINK_ON_LOAD : LF_THUMB_DECODE;
    }
    if (onto_white(&t)) return -1;
    // Decoded once: each quality tried below encodes these pixels, none decodes the photo again.
    VipsImage *m = lf.vips_image_copy_memory(t);
    lf.g_object_unref(t);
    if (!m) return -1;
    int r = 0;
    for (int q = opt->quality; q >= 15; q -= 15) {
        lf_media_free(*out);
        *out = NULL;
        *out_len = 0;
        if ((r = lf.vips_jpegsave_buffer(m, out, out_len, "Q", q, "strip", TRUE, "optimize_coding", TRUE, NULL))) break;
        if (opt->max_bytes <= 0 || *out_len <= (size_t)opt->max_bytes) break;
    }
    lf.g_object_unref(m);
    if (r || (opt->max_bytes > 0 && *out_len > (size_t)opt->max_bytes)) {  // failed, or no quality fits
        lf_media_free(*out);
        *out = NULL;
        *out_len = 0;
        *source = LF_THUMB_NONE;
        return r ? -1 : 0;
    }
    return 0;
}

int lf_media_decode_pixels(const void *buf, size_t len, int max_side, void **out, size_t *out_len,
                           int *width, int *height, int *bands) {
    *out = NULL;
    *out_len = 0;
    VipsImage *t = NULL;
    // The pixels as stored: no_rotate, so an EXIF orientation is not applied, and no
    // export_profile, so no embedded ICC profile is applied either (thumbnail then only converts
    // the colourspace, without ICC). What is decoded here is a peer's preview, checked to carry
    // no APP1 (EXIF) nor APP2 (ICC) first; nothing in it may change what is shown.
    if (lf.vips_thumbnail_buffer((void *)buf, len, &t, max_side, "height", max_side, "size", VIPS_SIZE_DOWN,
                                 "no_rotate", TRUE, NULL))
        return -1;
    if (onto_white(&t)) return -1;
    VipsImage *u = NULL;
    int r = lf.vips_cast_uchar(t, &u, NULL);
    lf.g_object_unref(t);
    if (r) return -1;
    *width = lf.vips_image_get_width(u);
    *height = lf.vips_image_get_height(u);
    *bands = lf.vips_image_get_bands(u);
    *out = lf.vips_image_write_to_memory(u, out_len);
    lf.g_object_unref(u);
    return *out ? 0 : -1;
}

int lf_media_has_heif_encoder(void) {
    return lf.vips_type_find("VipsOperation", "heifsave_buffer") != 0;
}

int lf_media_render(const void *buf, size_t len, const lf_media_render_options *opt,
                    void **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    // Every intermediate image belongs to `base` and goes with it at the end.
    VipsImage *base = lf.vips_image_new();
    VipsImage **x = (VipsImage **)lf.vips_object_local_array(VIPS_OBJECT(base), 12);
    int i = 0;  // x[i] is the current image
    int side = opt->max_side > 0 ? opt->max_side : VIPS_MAX_COORD;
    // thumbnail: shrink-on-load when smaller, never enlarged (size down), auto-rotated (the
    // orientation tag is then removed), metadata carried along. With no max_side it only rotates.
    int r = lf.vips_thumbnail_buffer((void *)buf, len, &x[0], side, "height", side, "size", VIPS_SIZE_DOWN, NULL);
    if (!r && lf.vips_image_hasalpha(x[i])) {  // neither JPEG nor the filters keep alpha: onto white
        VipsArrayDouble *white = lf.vips_array_double_newv(1, 255.0);
        r = lf.vips_flatten(x[i], &x[i + 1], "background", white, NULL);
        lf.vips_area_unref(VIPS_AREA(white));
        i++;
    }
    if (!r && opt->apply_filter) {
        // The filter is defined on 8-bit sRGB values (Filters.swift): grey, 16-bit and CMYK
        // images are converted first, so every photo gets the same arithmetic.
        r = lf.vips_colourspace(x[i], &x[i + 1], VIPS_INTERPRETATION_sRGB, NULL);
        i++;
        if (!r) {
            x[i + 1] = lf.vips_image_new_matrix_from_array(3, 3, opt->matrix, 9);
            r = !x[i + 1] || lf.vips_recomb(x[i], &x[i + 2], x[i + 1], NULL);
            i += 2;
        }
        // +0.5 then the cast (which truncates and clamps to 0...255): rounds to nearest.
        if (!r) { r = lf.vips_linear1(x[i], &x[i + 1], 1.0, 0.5, NULL); i++; }
        if (!r) { r = lf.vips_cast_uchar(x[i], &x[i + 1], NULL); i++; }
        if (!r) {
            x[i + 1] = lf.vips_image_new_from_memory_copy(opt->lut, sizeof opt->lut, 256, 1, 3, VIPS_FORMAT_UCHAR);
            r = !x[i + 1] || lf.vips_maplut(x[i], &x[i + 2], x[i + 1], NULL);
            i += 2;
        }
        if (!r) { r = lf.vips_copy(x[i], &x[i + 1], "interpretation", VIPS_INTERPRETATION_sRGB, NULL); i++; }
    }
    if (!r && opt->keep_metadata && opt->strip_location) {
        // As in lf_media_resize_to_jpeg: no GPS fields, no XMP, on a private copy.
        r = lf.vips_copy(x[i], &x[i + 1], NULL);
        i++;
        if (!r) {
            GSList *names = NULL;
            lf.vips_image_map(x[i], collect_location_fields, &names);
            for (GSList *p = names; p; p = p->next) lf.vips_image_remove(x[i], p->data);
            lf.g_slist_free_full(names, g_free);
        }
    }
    if (!r) {
        if (opt->heif)
            r = lf.vips_heifsave_buffer(x[i], out, out_len, "Q", opt->quality, "strip", !opt->keep_metadata, NULL);
        else
            r = lf.vips_jpegsave_buffer(x[i], out, out_len, "Q", opt->quality, "strip", !opt->keep_metadata,
                                        "optimize_coding", TRUE, NULL);
    }
    lf.g_object_unref(base);
    return r ? -1 : 0;
}

int lf_media_synthesize_jpeg(int width, int height, int quality, void **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    VipsImage *base = lf.vips_image_new();
    VipsImage **t = (VipsImage **)lf.vips_object_local_array(VIPS_OBJECT(base), 5);
    int r = lf.vips_xyz(&t[0], width, height, NULL) ||                 // 2 bands: x, y
            lf.vips_remainder_const1(t[0], &t[1], 256, NULL) ||
            lf.vips_bandjoin_const1(t[1], &t[2], 128, NULL) ||         // 3 bands
            lf.vips_cast_uchar(t[2], &t[3], NULL) ||
            lf.vips_copy(t[3], &t[4], "interpretation", VIPS_INTERPRETATION_sRGB, NULL) ||
            lf.vips_jpegsave_buffer(t[4], out, out_len, "Q", quality, NULL);
    lf.g_object_unref(base);
    return r ? -1 : 0;
}

char *lf_media_error_copy(void) {
    if (load_error[0]) return strdup(load_error);
    return lf.vips_error_buffer_copy ? lf.vips_error_buffer_copy() : NULL;
}

void lf_media_free(void *p) {
    if (lf.g_free) lf.g_free(p); else free(p);  // strdup'd load errors
}
