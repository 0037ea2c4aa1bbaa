// Links the `jackhost` executable's start-up constructor (see startup.c).
#ifndef JACKHOST_STARTUP_H
#define JACKHOST_STARTUP_H

/// Always 1; calling it from main keeps the constructor's object file in the link.
int jackhost_startup_linked(void);

#endif
