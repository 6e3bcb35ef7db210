#pragma once
// A storage header that reaches into the actors: the layer check must refuse it.
#include "actors/below.hpp"
#include <caf/actor.hpp>
