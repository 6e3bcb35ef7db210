#pragma once
// Goes down, as it should.
#include "wab/goes_up.hpp"
