#ifndef LOCAFOTO_CVIPS_SHIM_H
#define LOCAFOTO_CVIPS_SHIM_H
// libvips (8.14 on Debian 12). Used from C only (Sources/CMediaShim): the libvips API is
// variadic, which Swift cannot call; the system-library target carries the pkg-config flags.
#include <vips/vips.h>
#endif
