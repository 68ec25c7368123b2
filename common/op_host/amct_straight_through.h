// Straight-through autograd for the fake-quant ops (grad_input = grad_output, everywhere,
// also through NaN outputs), registered in C++ for the Autograd key: a Python autograd
// registration costs every call a Python round trip, several microseconds of a 1K call.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace amct {

// Forward::call(input, args...) calls the op below autograd (e.g. through its typed handle).
template <class Forward, class... Args>
class StraightThrough : public torch::autograd::Function<StraightThrough<Forward, Args...>> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext*, const at::Tensor& input, Args... args) {
    at::AutoDispatchBelowADInplaceOrView below;
    return Forward::call(input, args...);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::variable_list grads) {
    torch::autograd::variable_list inputs(1 + sizeof...(Args));  // no gradient for the other arguments
    inputs[0] = grads[0];
    return inputs;
  }
};

// The Autograd kernel: records the straight-through node only when a gradient can flow.
template <class Forward, class... Args>
at::Tensor straightThroughAutograd(const at::Tensor& input, Args... args) {
  if (at::GradMode::is_enabled() && input.requires_grad()) {
    return StraightThrough<Forward, Args...>::apply(input, args...);
  }
  at::AutoDispatchBelowADInplaceOrView below;  // nothing to record: skip the Function machinery
  return Forward::call(input, args...);
}

}  // namespace amct
