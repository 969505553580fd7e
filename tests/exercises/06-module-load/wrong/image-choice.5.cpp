// Wrong (R6): keeps the best images as values and returns a pointer to a static copy of the chosen one
//
// "Return a pointer that stays valid." The answer names the right file, but it is not the caller's
// element (the caller cannot find its position, and the next call overwrites it): the check asks
// whether each answer points into the list, and `pointsInto(c.images, image)` fails.
#include "exercises.hpp"

namespace ex06 {

const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  Image bestCubin{}, bestPtx{};
  bool haveCubin = false, havePtx = false;
  for (const Image& image : images) {
    if (image.ptx) {
      if (image.arch <= deviceArch && (!havePtx || image.arch > bestPtx.arch)) bestPtx = image, havePtx = true;
    } else {
      const bool runs = image.arch / 10 == deviceArch / 10 && image.arch % 10 <= deviceArch % 10;
      if (runs && (!haveCubin || image.arch > bestCubin.arch)) bestCubin = image, haveCubin = true;
    }
  }
  static Image chosen;
  if (!haveCubin && !havePtx) return nullptr;
  chosen = haveCubin ? bestCubin : bestPtx;
  return &chosen;
}

}  // namespace ex06
