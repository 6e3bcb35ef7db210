#pragma once
// An actor protocol: messages/ may use CAF.
#include <caf/typed_actor.hpp>
