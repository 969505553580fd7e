// Wrong (R3): takes the newest architecture that runs, PTX or cubin alike
//
// "Newer is better." PTX newer than the best cubin wins, and the device compiles at every load what
// it could have run as it was: for an 8.9 device with compute_89 PTX and an sm_80 cubin it picks the
// PTX, and `got == expected` fails.
#include "exercises.hpp"

namespace ex06 {

const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* best = nullptr;
  for (const Image& image : images) {
    const bool runs = image.ptx ? image.arch <= deviceArch
                                : image.arch / 10 == deviceArch / 10 && image.arch % 10 <= deviceArch % 10;
    if (runs && (!best || image.arch > best->arch)) best = &image;
  }
  return best;
}

}  // namespace ex06
