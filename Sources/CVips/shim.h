#ifndef LOCAFOTO_CVIPS_SHIM_H
#define LOCAFOTO_CVIPS_SHIM_H
// libvips (8.14 on Debian 12). Used from C only (Sources/CMediaShim): the libvips API is
// variadic, which Swift cannot call. Headers only: CMediaShim opens libvips.so.42 at first use
// (dlopen), so no process links it; the system-library target carries glib's include flags.
#include <vips/vips.h>
#endif
