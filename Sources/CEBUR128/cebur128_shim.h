// libebur128 (1.2), for `--loudness`: EBU R128 / ITU-R BS.1770 loudness (momentary, short-term,
// integrated, loudness range) and true peak, the library the field uses (ffmpeg's ebur128 filter
// family, r128gain, loudness-scanner). Called on a deferred consumer's worker thread only.
#include <ebur128.h>
