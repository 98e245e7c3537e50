// See include/lf_media.h. Each function releases every libvips object it creates before
// returning; on failure the reason is in libvips' error buffer (lf_media_error_copy).
#include <string.h>
#include <vips/vips.h>
#include "lf_media.h"

static void drop_warning(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain;
    (void)level;
    (void)message;
    (void)data;
}

int lf_media_init(void) {
    if (VIPS_INIT("locafoto")) return -1;
    // libvips reports recoverable damage ("premature end of JPEG file", "eXIf: CRC error",
    // "heifload: ignoring nclx profile") as GLib warnings on stderr: not for an agent's
    // stderr. Failures still come back as errors (lf_media_error_copy).
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, drop_warning, NULL);
    vips_concurrency_set(1);  // the agent decides how many photos are processed in parallel
    // Operation cache off: entries are keyed by the *address* of caller-owned buffers, which
    // Swift reuses for different photos, and the vault wants no decoded pixels kept around.
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_block_untrusted_set(TRUE);  // e.g. magick/matlab/fits loaders: never for photos
    vips_leak_set(FALSE);
    return 0;
}

int lf_media_read_header(const void *buf, size_t len, lf_media_header *out,
                         void **exif, size_t *exif_len) {
    memset(out, 0, sizeof *out);
    *exif = NULL;
    *exif_len = 0;
    VipsImage *im = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!im) return -1;
    out->width = vips_image_get_width(im);
    out->height = vips_image_get_height(im);
    int v = 0;
    if (vips_image_get_typeof(im, VIPS_META_ORIENTATION) &&
        !vips_image_get_int(im, VIPS_META_ORIENTATION, &v))
        out->orientation = v;
    out->pages = 1;
    if (vips_image_get_typeof(im, VIPS_META_N_PAGES) &&
        !vips_image_get_int(im, VIPS_META_N_PAGES, &v) && v > 0)
        out->pages = v;
    const char *loader = NULL;
    if (vips_image_get_typeof(im, VIPS_META_LOADER) &&
        !vips_image_get_string(im, VIPS_META_LOADER, &loader) && loader)
        g_strlcpy(out->loader, loader, sizeof out->loader);
    const void *data = NULL;
    size_t n = 0;
    if (vips_image_get_typeof(im, VIPS_META_EXIF_NAME) &&
        !vips_image_get_blob(im, VIPS_META_EXIF_NAME, &data, &n) && data && n > 0) {
        *exif = g_memdup2(data, n);
        *exif_len = n;
    }
    g_object_unref(im);
    return 0;
}

// Collects the names of header fields to remove (removing while mapping is not allowed).
static void *collect_location_fields(VipsImage *image, const char *name, GValue *value, void *a) {
    (void)image;
    (void)value;
    GSList **names = a;
    if (g_str_has_prefix(name, "exif-ifd3-") || strcmp(name, VIPS_META_XMP_NAME) == 0)
        *names = g_slist_prepend(*names, g_strdup(name));
    return NULL;
}

int lf_media_resize_to_jpeg(const void *buf, size_t len, const lf_media_jpeg_options *opt,
                            void **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    VipsImage *t = NULL;
    int r;
    if (opt->keep_metadata)
        r = vips_thumbnail_buffer((void *)buf, len, &t, opt->max_side, "height", opt->max_side,
                                  "size", VIPS_SIZE_DOWN, NULL);
    else  // the ICC profile goes with the metadata: convert to sRGB so colours stay right
        r = vips_thumbnail_buffer((void *)buf, len, &t, opt->max_side, "height", opt->max_side,
                                  "size", VIPS_SIZE_DOWN, "export_profile", "srgb", NULL);
    if (r) return -1;

    if (vips_image_hasalpha(t)) {  // JPEG has no alpha: composite onto white
        VipsArrayDouble *white = vips_array_double_newv(1, 255.0);
        VipsImage *f = NULL;
        r = vips_flatten(t, &f, "background", white, NULL);
        vips_area_unref(VIPS_AREA(white));
        g_object_unref(t);
        if (r) return -1;
        t = f;
    }

    if (opt->keep_metadata && opt->strip_location) {
        // At save, libvips rebuilds EXIF from "exif-data" and removes every tag whose
        // "exif-ifdN-Name" field is gone: dropping the ifd3 (GPS) fields drops the GPS IFD.
        // XMP may repeat the position (exif:GPSLatitude...): it goes too.
        VipsImage *c = NULL;
        if (vips_copy(t, &c, NULL)) {  // fields of a shared image must not be modified
            g_object_unref(t);
            return -1;
        }
        g_object_unref(t);
        t = c;
        GSList *names = NULL;
        vips_image_map(t, collect_location_fields, &names);
        for (GSList *p = names; p; p = p->next) vips_image_remove(t, p->data);
        g_slist_free_full(names, g_free);
    }

    r = vips_jpegsave_buffer(t, out, out_len, "Q", opt->quality, "strip", !opt->keep_metadata,
                             "optimize_coding", TRUE, NULL);
    g_object_unref(t);
    return r ? -1 : 0;
}

int lf_media_synthesize_jpeg(int width, int height, int quality, void **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    VipsImage *base = vips_image_new();
    VipsImage **t = (VipsImage **)vips_object_local_array(VIPS_OBJECT(base), 5);
    int r = vips_xyz(&t[0], width, height, NULL) ||                 // 2 bands: x, y
            vips_remainder_const1(t[0], &t[1], 256, NULL) ||
            vips_bandjoin_const1(t[1], &t[2], 128, NULL) ||         // 3 bands
            vips_cast_uchar(t[2], &t[3], NULL) ||
            vips_copy(t[3], &t[4], "interpretation", VIPS_INTERPRETATION_sRGB, NULL) ||
            vips_jpegsave_buffer(t[4], out, out_len, "Q", quality, NULL);
    g_object_unref(base);
    return r ? -1 : 0;
}

char *lf_media_error_copy(void) { return vips_error_buffer_copy(); }

void lf_media_free(void *p) { g_free(p); }
