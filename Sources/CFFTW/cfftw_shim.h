// FFTW 3 (single precision), for the live view's spectrum. Only fftwf_* is used.
#include <fftw3.h>
