// liblo (0.31), for `--osc`: only its message codec is used (lo_message_deserialise,
// lo_message_serialise and the typed lo_message_add_* calls). jackhost owns the UDP socket
// itself, because liblo 0.31 cannot bind a UDP server to one chosen address.
#include <lo/lo.h>
