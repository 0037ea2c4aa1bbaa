#include "jackhost_plugin.h"
