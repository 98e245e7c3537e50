#ifndef LOCAFOTO_CSODIUM_SHIM_H
#define LOCAFOTO_CSODIUM_SHIM_H
#include <sodium.h>
#endif
