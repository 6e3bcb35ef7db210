#pragma once
// The same, spelled so that a simple reading would miss it: refused.
#include <actors/below.hpp>
#include "wab/../daemon/x.hpp"
