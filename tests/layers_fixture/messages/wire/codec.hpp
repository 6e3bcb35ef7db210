#pragma once
// The wire codec reaching up into its own top folder's protocols: refused.
#include "messages/protocol.hpp"
