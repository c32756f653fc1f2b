fn main() {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    for a in adapters {
        let info = a.get_info();
        println!("{info:?}");
        println!("features {:?}", a.features());
        let l = a.limits();
        println!("max_buffer {} max_storage_binding {} wg_storage {} inv {} dim {} uniform_align {} storage_buffers {}", l.max_buffer_size, l.max_storage_buffer_binding_size, l.max_compute_workgroup_storage_size, l.max_compute_invocations_per_workgroup, l.max_compute_workgroups_per_dimension, l.min_uniform_buffer_offset_alignment, l.max_storage_buffers_per_shader_stage);
    }
}
