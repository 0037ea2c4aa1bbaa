// Shim for libsoxr (the SoX resampler library, Debian's libsoxr-dev). Swift imports <soxr.h>
// directly; this header exists only so the module map has one umbrella to point at.
#ifndef CSOXR_SHIM_H
#define CSOXR_SHIM_H
#include <soxr.h>
#endif
