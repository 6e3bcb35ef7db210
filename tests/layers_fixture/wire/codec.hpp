#pragma once
// The wire codec reaching up into the actor protocols: refused.
#include "messages/protocol.hpp"
