// xtensor containers as switchyard Buffers: `xt::xtensor`, `xt::xarray` and the adaptors made by
// `xt::adapt` are viewed in place through their contiguous storage. Kept apart so that the core
// never needs xtensor.
#pragma once

#include <switchyard/core/buffer.hpp>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <cstddef>
#include <span>

namespace switchyard {

namespace detail {

// Every xtensor container and adaptor keeps its elements contiguous in `data()[0, size())`, in
// its own layout order; element-wise collectives do not care which order, only that all ranks
// use the same shape and layout.
template <class Container>
struct xtensor_buffer_traits {
  static auto span(Container& c) { return std::span(c.data(), c.size()); }
  static auto span(const Container& c) { return std::span(c.data(), c.size()); }
};

}  // namespace detail

template <class EC, std::size_t N, xt::layout_type L, class Tag>
struct buffer_traits<xt::xtensor_container<EC, N, L, Tag>>
    : detail::xtensor_buffer_traits<xt::xtensor_container<EC, N, L, Tag>> {};

template <class EC, xt::layout_type L, class SC, class Tag>
struct buffer_traits<xt::xarray_container<EC, L, SC, Tag>>
    : detail::xtensor_buffer_traits<xt::xarray_container<EC, L, SC, Tag>> {};

template <class EC, std::size_t N, xt::layout_type L, class Tag>
struct buffer_traits<xt::xtensor_adaptor<EC, N, L, Tag>>
    : detail::xtensor_buffer_traits<xt::xtensor_adaptor<EC, N, L, Tag>> {};

template <class EC, xt::layout_type L, class SC, class Tag>
struct buffer_traits<xt::xarray_adaptor<EC, L, SC, Tag>>
    : detail::xtensor_buffer_traits<xt::xarray_adaptor<EC, L, SC, Tag>> {};

}  // namespace switchyard
