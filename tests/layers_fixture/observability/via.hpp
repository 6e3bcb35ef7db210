#pragma once
// Allowed by layer, but it brings CAF into observability/: refused.
#include "messages/protocol.hpp"
