#pragma once
// Storage reaching into the actors, and using CAF: both refused.
#include "actors/below.hpp"
#include <caf/actor.hpp>
