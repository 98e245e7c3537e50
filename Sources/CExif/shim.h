#ifndef LOCAFOTO_CEXIF_SHIM_H
#define LOCAFOTO_CEXIF_SHIM_H
// libexif (0.6.24 on Debian 12): parsing and rewriting EXIF blocks in memory.
#include <libexif/exif-data.h>
#include <libexif/exif-content.h>
#include <libexif/exif-entry.h>
#include <libexif/exif-utils.h>
#include <libexif/exif-ifd.h>
#include <libexif/exif-tag.h>
#endif
