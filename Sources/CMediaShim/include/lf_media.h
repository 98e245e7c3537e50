#ifndef LOCAFOTO_LF_MEDIA_H
#define LOCAFOTO_LF_MEDIA_H
// A small C surface over libvips for LocafotoMedia: the libvips API is variadic (NULL-terminated
// option lists), which Swift cannot call. Everything works on memory buffers (no files).
// This header deliberately includes no libvips/glib header, so Swift sees plain C types only.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What the loader says about an image without decoding its pixels.
typedef struct lf_media_header {
    int width;        ///< pixel columns as decoded (HEIF/AVIF: after libheif applied irot/imir)
    int height;       ///< pixel rows as decoded
    int orientation;  ///< libvips' "orientation" field (EXIF 1...8), 0 when absent
    int pages;        ///< "n-pages" (animations, multi-page TIFF), 1 when absent
    char loader[40];  ///< libvips loader name, e.g. "jpegload_buffer"
} lf_media_header;

/// Options of lf_media_resize_to_jpeg.
typedef struct lf_media_jpeg_options {
    int max_side;        ///< longest side of the output at most this (never upscaled)
    int quality;         ///< JPEG quality 1...100
    int keep_metadata;   ///< 0: strip EXIF/XMP/IPTC/ICC (pixels converted to sRGB first)
    int strip_location;  ///< with keep_metadata: drop the EXIF GPS IFD and any XMP packet
} lf_media_jpeg_options;

/// VIPS_INIT, then concurrency 1, the operation cache off and untrusted loaders blocked.
/// Not thread-safe by itself: call once (LocafotoMedia guards it). 0 or -1.
int lf_media_init(void);

/// Reads the header of an image in memory (libvips, sequential access: no pixel decoding).
/// `*exif`/`*exif_len` receive a copy of the raw EXIF block libvips found ("exif-data"),
/// or NULL/0; free it with lf_media_free. 0 or -1 (see lf_media_error_copy).
int lf_media_read_header(const void *buf, size_t len, lf_media_header *out,
                         void **exif, size_t *exif_len);

/// Decodes (shrink-on-load where the format allows), auto-rotates by the EXIF orientation
/// (HEIF: already rotated by libheif, no orientation field), shrinks so that the longest side is
/// at most max_side (never enlarges), flattens any alpha onto white and encodes a baseline JPEG
/// with optimised Huffman tables. `*out` is allocated by libvips: free it with lf_media_free.
int lf_media_resize_to_jpeg(const void *buf, size_t len, const lf_media_jpeg_options *opt,
                            void **out, size_t *out_len);

/// Where lf_media_quick_thumbnail found its pixels.
enum {
    LF_THUMB_NONE = 0,            ///< no thumbnail: no cheap source, and a full decode not allowed
    LF_THUMB_EXIF = 1,            ///< the JPEG's EXIF thumbnail (IFD1), turned by the EXIF orientation
    LF_THUMB_HEIF_ITEM = 2,       ///< the HEIF/AVIF file's thumbnail item
    LF_THUMB_SHRINK_ON_LOAD = 3,  ///< a decode bounded by the output size (JPEG shrink-on-load, WebP)
    LF_THUMB_DECODE = 4,          ///< every pixel decoded (small images, or allow_full_decode)
};

/// Options of lf_media_quick_thumbnail.
typedef struct lf_media_quick_options {
    int max_side;             ///< longest side of the output at most this (never upscaled)
    int quality;              ///< first JPEG quality tried; then 15 lower each time, down to 15
    int max_bytes;            ///< > 0: the output must fit (else no thumbnail); 0: no limit
    int min_embedded_side;    ///< an embedded thumbnail is used when its longest side is at least this; 0: never
    int allow_full_decode;    ///< 1: decode every pixel when nothing cheaper serves
    long max_full_decode_pixels;  ///< without allow_full_decode, images up to this many pixels still decode in full
    int embedded_only;        ///< 1: an embedded thumbnail or nothing (e.g. `buf` is only the file's head)
} lf_media_quick_options;

/// A JPEG thumbnail (auto-rotated, sRGB, alpha onto white, no metadata) from the cheapest source
/// that serves: an embedded thumbnail of the same picture (EXIF IFD1 of a JPEG, a HEIF/AVIF
/// thumbnail item) at least `min_embedded_side` px long, else a decode bounded by the output size
/// (JPEG shrink-on-load, WebP), else a full decode when allowed. The pixels are decoded once; the
/// qualities are tried on them. `*source` says which (LF_THUMB_*). Returns 0 with `*out` NULL and
/// LF_THUMB_NONE when nothing is allowed or no quality fits `max_bytes`; -1 when the image cannot
/// be read. Free `*out` with lf_media_free.
int lf_media_quick_thumbnail(const void *buf, size_t len, const lf_media_quick_options *opt, void **out,
                             size_t *out_len, int *source);

/// Decodes an image to 8-bit pixels (rows top to bottom, `bands` bytes a pixel: 1 grey or
/// 3 RGB; alpha flattened onto white), the longest side shrunk to at most max_side, as stored:
/// not rotated by any EXIF orientation, no ICC profile applied. `*out` is
/// width * height * bands bytes allocated by libvips: free it with lf_media_free.
int lf_media_decode_pixels(const void *buf, size_t len, int max_side, void **out, size_t *out_len,
                           int *width, int *height, int *bands);

/// Options of lf_media_render.
typedef struct lf_media_render_options {
    int max_side;        ///< longest side at most this (never upscaled); 0: the photo's own size
    int quality;         ///< encoder quality 1...100
    int keep_metadata;   ///< 0: strip EXIF/XMP/IPTC/ICC
    int strip_location;  ///< with keep_metadata: drop the EXIF GPS IFD and any XMP packet
    int heif;            ///< 0: baseline JPEG (optimised Huffman tables); 1: HEIC (libheif, HEVC)
    int apply_filter;    ///< 1: `matrix` then `lut` on the 8-bit sRGB pixels
    double matrix[9];    ///< row-major 3x3: out[r] = sum(matrix[3r+c] * in[c]), rounded, clamped 0...255
    unsigned char lut[256 * 3];  ///< then per channel: out = lut[3 * value + band] (R, G, B interleaved)
} lf_media_render_options;

/// Decodes, auto-rotates, shrinks (never enlarges), flattens alpha onto white, optionally applies
/// a colour filter (see lf_media_render_options), and encodes JPEG or HEIC keeping (or not) the
/// metadata. `*out` is allocated by libvips: free it with lf_media_free. 0 or -1.
int lf_media_render(const void *buf, size_t len, const lf_media_render_options *opt,
                    void **out, size_t *out_len);

/// 1 when this libvips can write HEIC (heifsave_buffer exists: built with libheif and an
/// HEVC encoder), else 0.
int lf_media_has_heif_encoder(void);

/// For tests and benchmarks: a synthetic width x height sRGB JPEG (smooth pattern) at `quality`.
int lf_media_synthesize_jpeg(int width, int height, int quality, void **out, size_t *out_len);

/// A copy of libvips' (process-wide) error buffer, which is then cleared; free with lf_media_free.
char *lf_media_error_copy(void);

/// Frees memory returned by the functions above (g_free).
void lf_media_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
