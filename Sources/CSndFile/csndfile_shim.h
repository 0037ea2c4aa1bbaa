// Shim for libsndfile. Swift imports <sndfile.h> directly; this header exists
// only so the module map has one umbrella to point at.
#ifndef CSNDFILE_SHIM_H
#define CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
